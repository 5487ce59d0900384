package mango

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

// The example of the Standard Webhooks specification.
func TestVerifyWebhookAcceptsTheSpecExampleAndRejectsTampering(t *testing.T) {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"test": 2432232314}`)
	h := http.Header{}
	h.Set("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek")
	h.Set("webhook-timestamp", "1614265330")
	h.Set("webhook-signature", "v1,bm9ldHRoZXNpZ25hdHVyZQ== v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
	now := time.Unix(1614265330, 0)
	if err := VerifyWebhook(body, h, secret, now.Add(299*time.Second)); err != nil {
		t.Fatal(err)
	}
	other := h.Clone()
	other.Set("webhook-id", "msg_other")
	missing := h.Clone()
	missing.Del("webhook-signature")
	for name, err := range map[string]error{
		"body":      VerifyWebhook([]byte(`{"test": 2432232315}`), h, secret, now),
		"id":        VerifyWebhook(body, other, secret, now),
		"key":       VerifyWebhook(body, h, "whsec_YW5vdGhlciBrZXk=", now),
		"stale":     VerifyWebhook(body, h, secret, now.Add(301*time.Second)),
		"future":    VerifyWebhook(body, h, secret, now.Add(-301*time.Second)),
		"no header": VerifyWebhook(body, missing, secret, now),
	} {
		if !errors.Is(err, ErrWebhookVerification) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
