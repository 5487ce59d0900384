package mango

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// WorkSecret is the decoded `secret` of a polled Work item.
type WorkSecret struct {
	// SessionsToken is the Work token (mango_wt_…) for Heartbeat, Result, Fail and Stop.
	SessionsToken string `json:"sessions_token"`
	// APIBaseURL is the base URL the worker should call with SessionsToken.
	APIBaseURL string `json:"api_base_url"`
}

// ErrInvalidWorkSecret is wrapped by every DecodeWorkSecret failure.
var ErrInvalidWorkSecret = errors.New("invalid Work secret")

var base64url = regexp.MustCompile(`^[A-Za-z0-9_-]*={0,2}$`)

func invalidSecret(msg string) error { return errors.Join(ErrInvalidWorkSecret, errors.New(msg)) }

// DecodeWorkSecret decodes URL-safe base64 (padding optional) of {"sessions_token","api_base_url"}. It
// fails (wrapping ErrInvalidWorkSecret) unless sessions_token is a non-empty string and api_base_url an
// http(s) URL; unknown extra fields are ignored. The secret itself is never included in the error.
func DecodeWorkSecret(secret string) (WorkSecret, error) {
	var out WorkSecret
	if secret == "" {
		return out, invalidSecret("expected a non-empty string")
	}
	if !base64url.MatchString(secret) {
		return out, invalidSecret("not URL-safe base64 (allowed: A-Z a-z 0-9 - _ and trailing =)")
	}
	unpadded := strings.TrimRight(secret, "=")
	if len(unpadded)%4 == 1 || (len(secret) != len(unpadded) && len(secret)%4 != 0) {
		return out, invalidSecret("base64 length or padding is invalid")
	}
	raw, err := base64.RawURLEncoding.DecodeString(unpadded)
	if err != nil {
		return out, invalidSecret("not decodable as base64")
	}
	if !utf8.Valid(raw) {
		return out, invalidSecret("payload is not UTF-8 JSON")
	}
	if !json.Valid(raw) {
		return out, invalidSecret("payload is not UTF-8 JSON")
	}
	var fields map[string]json.RawMessage
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || json.Unmarshal(raw, &fields) != nil {
		return out, invalidSecret("payload is not a JSON object")
	}
	if json.Unmarshal(fields["sessions_token"], &out.SessionsToken) != nil || out.SessionsToken == "" {
		return WorkSecret{}, invalidSecret("sessions_token is missing or not a non-empty string")
	}
	if json.Unmarshal(fields["api_base_url"], &out.APIBaseURL) != nil || !isHTTPURL(out.APIBaseURL) {
		return WorkSecret{}, invalidSecret("api_base_url is missing or not an http(s) URL")
	}
	return out, nil
}

// EncodeWorkSecret encodes a WorkSecret the way the server does (URL-safe base64 without padding).
func EncodeWorkSecret(s WorkSecret) string {
	raw, _ := json.Marshal(s)
	return base64.RawURLEncoding.EncodeToString(raw)
}

func isHTTPURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
