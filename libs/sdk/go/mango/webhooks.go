package mango

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrWebhookVerification is returned (wrapped) for a webhook delivery that does not verify.
var ErrWebhookVerification = errors.New("mango: webhook verification failed")

// WebhookTolerance is the accepted clock skew of webhook-timestamp (the Standard Webhooks default).
const WebhookTolerance = 5 * time.Minute

func webhookErr(msg string) error { return errors.Join(ErrWebhookVerification, errors.New(msg)) }

// VerifyWebhook checks one delivery with the Standard Webhooks scheme: webhook-id, webhook-timestamp and
// webhook-signature ("v1,<base64 HMAC-SHA256 of id.timestamp.body>" entries), keyed by the base64 after
// "whsec_". Pass the raw body exactly as received; now is the current time (time.Now() in production).
func VerifyWebhook(body []byte, header http.Header, secret string, now time.Time) error {
	id, ts, sigs := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return webhookErr("missing webhook-* headers")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return webhookErr("invalid webhook-timestamp")
	}
	if math.Abs(float64(now.Unix()-sec)) > WebhookTolerance.Seconds() {
		return webhookErr("webhook-timestamp outside the tolerance")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return webhookErr("the signing secret is not base64")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	expected := mac.Sum(nil)
	for _, entry := range strings.Split(sigs, " ") {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		given, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(given, expected) {
			return nil
		}
	}
	return webhookErr("no matching webhook-signature")
}
