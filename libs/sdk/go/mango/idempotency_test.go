package mango

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"

	"mango.dev/sdk/generated"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// keyServer answers with replies in order (the last one repeats) and records each request's key.
func keyServer(t *testing.T, replies ...func(w http.ResponseWriter)) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get(IdempotencyKeyHeader))
		n := len(keys)
		mu.Unlock()
		replies[min(n, len(replies))-1](w)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), keys...) }
}

func agentReply(headers map[string]string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"agent_1","name":"a","version":1}`))
	}
}

func conflictReply(code string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"type":"error","error":{"type":"invalid_request_error","message":"x","details":{"error_code":"` + code + `"}},"request_id":"req_e"}`))
	}
}

func createTestAgent(ctx context.Context, c *Client) error {
	var model generated.ModelParam
	if err := model.FromModelId("m"); err != nil {
		return err
	}
	_, err := c.Agents.Create(ctx, generated.AgentCreateRequest{Name: "a", Model: model})
	return err
}

func TestEveryRetryOfAPostResendsItsOneUUIDKeyAndTheNextCallGetsANewOne(t *testing.T) {
	srv, keys := keyServer(t, func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }, agentReply(nil))
	c, _ := newTestClient(t, srv.URL)
	for range 2 {
		if err := createTestAgent(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	k := keys()
	if len(k) != 3 || !uuidV4.MatchString(k[0]) || k[1] != k[0] || k[2] == k[0] || !uuidV4.MatchString(k[2]) {
		t.Fatalf("keys %q: want one UUID for the call and its retry, a new one for the next call", k)
	}
}

func TestTheCallersKeyIsSentAndAGetSendsNone(t *testing.T) {
	srv, keys := keyServer(t, agentReply(nil))
	c, _ := newTestClient(t, srv.URL)
	if err := createTestAgent(WithIdempotencyKey(context.Background(), "my-key-1"), c); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Agents.Retrieve(context.Background(), "agent_1", nil)
	if k := keys(); len(k) != 2 || k[0] != "my-key-1" || k[1] != "" {
		t.Fatalf("keys %q", k)
	}
}

func TestA409InProgressIsRetriedAndTheReplayIsReported(t *testing.T) {
	srv, keys := keyServer(t, conflictReply("idempotency_in_progress"),
		agentReply(map[string]string{"Idempotent-Replayed": "true", "Request-Id": "req_first"}))
	c, _ := newTestClient(t, srv.URL)
	var info ResponseInfo
	if err := createTestAgent(WithResponseInfo(context.Background(), &info), c); err != nil {
		t.Fatal(err)
	}
	k := keys()
	if len(k) != 2 || k[1] != k[0] {
		t.Fatalf("keys %q", k)
	}
	if info != (ResponseInfo{Status: 201, RequestID: "req_first", IdempotencyKey: k[0], Replayed: true}) {
		t.Fatalf("info %+v", info)
	}
}

func TestAnother409IsNotRetried(t *testing.T) {
	srv, keys := keyServer(t, conflictReply("idempotency_key_reused"))
	c, _ := newTestClient(t, srv.URL)
	err := createTestAgent(context.Background(), c)
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || len(keys()) != 1 {
		t.Fatalf("err %v after %d requests", err, len(keys()))
	}
}
