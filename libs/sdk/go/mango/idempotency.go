package mango

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/google/uuid"
)

// IdempotencyKeyHeader makes a POST safe to send again (docs/api-guide.md, "Idempotent requests"): a
// repeat with the same key and the same request writes nothing and gets the first response replayed.
// Every POST this client sends carries one: a fresh UUID per call, re-sent unchanged by each retry of it
// (WithIdempotencyKey chooses it).
const IdempotencyKeyHeader = "Idempotency-Key"

type contextKey int

const (
	idempotencyKeyContext contextKey = iota
	responseInfoContext
)

// WithIdempotencyKey returns a context under which a POST sends key as its Idempotency-Key instead of a
// fresh UUID — e.g. a key saved before a crash, to repeat that call safely. One key names one request:
// use the context for one call.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKeyContext, key)
}

// ResponseInfo is what WithResponseInfo records about a call's successful (2xx) response.
type ResponseInfo struct {
	Status int
	// RequestID is the response's request-id; on a replay, the id of the request that ran.
	RequestID string
	// IdempotencyKey is the key the call sent (every POST sends one).
	IdempotencyKey string
	// Replayed reports whether the server answered with the stored response of an earlier request with
	// the same key (the idempotent-replayed header).
	Replayed bool
}

// WithResponseInfo returns a context under which the call's successful response is described in *info.
func WithResponseInfo(ctx context.Context, info *ResponseInfo) context.Context {
	return context.WithValue(ctx, responseInfoContext, info)
}

// addIdempotencyKey gives a POST its key once, before the first attempt, so every retry sends it too.
func addIdempotencyKey(req *http.Request) {
	if req.Method != http.MethodPost || req.Header.Get(IdempotencyKeyHeader) != "" {
		return
	}
	key, _ := req.Context().Value(idempotencyKeyContext).(string)
	if key == "" {
		key = uuid.NewString()
	}
	req.Header.Set(IdempotencyKeyHeader, key)
}

// isIdempotencyInProgress reports a 409 saying the request with this call's key is still running (a
// retry while the first attempt runs): sent again after retry-after, it gets that request's response.
// The body stays readable.
func isIdempotencyInProgress(req *http.Request, res *http.Response) bool {
	if res.StatusCode != http.StatusConflict || req.Header.Get(IdempotencyKeyHeader) == "" {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	_ = res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	var envelope struct {
		Error struct {
			Details struct {
				ErrorCode string `json:"error_code"`
			} `json:"details"`
		} `json:"error"`
	}
	return json.Unmarshal(body, &envelope) == nil && envelope.Error.Details.ErrorCode == "idempotency_in_progress"
}

// reportResponse fills the caller's ResponseInfo, if any, from a successful response.
func reportResponse(req *http.Request, res *http.Response) {
	info, _ := req.Context().Value(responseInfoContext).(*ResponseInfo)
	if info == nil || res.StatusCode < 200 || res.StatusCode >= 300 {
		return
	}
	*info = ResponseInfo{
		Status:         res.StatusCode,
		RequestID:      res.Header.Get("Request-Id"),
		IdempotencyKey: req.Header.Get(IdempotencyKeyHeader),
		Replayed:       res.Header.Get("Idempotent-Replayed") == "true",
	}
}
