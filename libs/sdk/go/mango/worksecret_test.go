package mango

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func TestDecodeWorkSecretRoundTripsAndAcceptsPadding(t *testing.T) {
	in := WorkSecret{SessionsToken: "mango_wt_abc", APIBaseURL: "http://127.0.0.1:8080"}
	enc := EncodeWorkSecret(in)
	if strings.ContainsAny(enc, "+/=") {
		t.Fatalf("not unpadded base64url: %s", enc)
	}
	for _, s := range []string{enc, base64.URLEncoding.EncodeToString([]byte(`{"sessions_token":"mango_wt_abc","api_base_url":"http://127.0.0.1:8080","extra":1}`))} {
		got, err := DecodeWorkSecret(s)
		if err != nil || got != in {
			t.Fatalf("DecodeWorkSecret(%s) = %+v, %v", s, got, err)
		}
	}
}

func TestDecodeWorkSecretRejectsBadInput(t *testing.T) {
	b := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	cases := map[string]string{
		"":                               "non-empty",
		"a+b/":                           "URL-safe",
		"abcde":                          "length or padding",
		b("\xff\xfe"):                    "UTF-8 JSON",
		b(`[1]`):                         "JSON object",
		b(`{"api_base_url":"http://x"}`): "sessions_token",
		b(`{"sessions_token":"t","api_base_url":"ftp://x"}`): "api_base_url",
	}
	for in, want := range cases {
		_, err := DecodeWorkSecret(in)
		if !errors.Is(err, ErrInvalidWorkSecret) || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeWorkSecret(%q) = %v, want %q", in, err, want)
		}
	}
}
