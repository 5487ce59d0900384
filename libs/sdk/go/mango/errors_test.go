package mango

import (
	"errors"
	"net/http"
	"testing"
)

func TestErrorFromResponseReadsTheEnvelope(t *testing.T) {
	h := http.Header{}
	h.Set("Request-Id", "req_header")
	e := ErrorFromResponse(412, h, []byte(`{"type":"error","error":{"type":"heartbeat_precondition_failed","message":"stale","details":{"current_state":{"state":"active"}}},"request_id":"req_body"}`))
	if e.Type != "heartbeat_precondition_failed" || e.Message != "stale" || e.RequestID != "req_body" {
		t.Fatalf("%+v", e)
	}
	if state, _ := e.Details["current_state"].(map[string]any); state["state"] != "active" {
		t.Fatalf("details = %v", e.Details)
	}
	if !errors.Is(e, ErrPreconditionFailed) || errors.Is(e, ErrNotFound) {
		t.Fatal("errors.Is does not follow the status")
	}
}

func TestErrorFromResponseFallsBackForNonEnvelopes(t *testing.T) {
	h := http.Header{}
	h.Set("Request-Id", "req_h")
	e := ErrorFromResponse(502, h, []byte("<html>bad   gateway</html>"))
	if e.Type != "api_error" || e.Message != "HTTP 502: <html>bad gateway</html>" || e.RequestID != "req_h" {
		t.Fatalf("%+v", e)
	}
	if !errors.Is(e, ErrServer) {
		t.Fatal("502 is not ErrServer")
	}
	if got := ErrorFromResponse(418, http.Header{}, nil); got.Type != "unknown_error" || got.Message != "HTTP 418" {
		t.Fatalf("%+v", got)
	}
}
