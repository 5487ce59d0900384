package mango

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"mango.dev/sdk/generated"
)

// A tiny local server stands in for a flaky upstream; Mango itself is exercised in live_test.go.
func newTestClient(t *testing.T, url string, opts ...Option) (*Client, *[]time.Duration) {
	t.Helper()
	c, err := New(url, "mango_ak_test", opts...)
	if err != nil {
		t.Fatal(err)
	}
	var slept []time.Duration
	c.sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	return c, &slept
}

func TestRetriesA503ThenSucceedsReplayingThePostBody(t *testing.T) {
	var hits atomic.Int32
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if r.Header.Get("Authorization") != "Bearer mango_ak_test" {
			t.Errorf("authorization header = %q", r.Header.Get("Authorization"))
		}
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After-Ms", "5")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"agent_1","name":"a","version":1}`))
	}))
	defer srv.Close()
	c, slept := newTestClient(t, srv.URL)
	var model generated.ModelParam
	if err := model.FromModelId("m"); err != nil {
		t.Fatal(err)
	}
	agent, err := Decode[generated.Agent](c.AgentsCreate(context.Background(), generated.AgentCreateRequest{Name: "a", Model: model}))
	if err != nil {
		t.Fatal(err)
	}
	if agent.Id != "agent_1" || hits.Load() != 2 {
		t.Fatalf("agent %+v after %d hits", agent, hits.Load())
	}
	if len(bodies) != 2 || bodies[0] == "" || bodies[0] != bodies[1] {
		t.Fatalf("bodies not replayed: %q", bodies)
	}
	if len(*slept) != 1 || (*slept)[0] != 5*time.Millisecond {
		t.Fatalf("slept %v, want [5ms] from Retry-After-Ms", *slept)
	}
}

func TestGivesUpAfterMaxRetriesWithTheLastError(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Request-Id", "req_header")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"},"request_id":"req_1"}`))
	}))
	defer srv.Close()
	c, slept := newTestClient(t, srv.URL, WithMaxRetries(3))
	_, err := Decode[generated.Agent](c.AgentsRetrieve(context.Background(), "agent_x", nil))
	if !errors.Is(err, ErrRateLimited) {
		t.Fatalf("err = %v", err)
	}
	e, _ := AsError(err)
	if e.Type != "rate_limit_error" || e.Message != "slow down" || e.RequestID != "req_1" {
		t.Fatalf("envelope not carried: %+v", e)
	}
	if hits.Load() != 4 || len(*slept) != 3 {
		t.Fatalf("hits %d, sleeps %v", hits.Load(), *slept)
	}
	for i, d := range *slept {
		ceiling := initialRetryDelay << i
		if d > ceiling || d < ceiling*3/4 {
			t.Fatalf("sleep %d = %v, want within [75%%, 100%%] of %v", i, d, ceiling)
		}
	}
}

func TestDoesNotRetryA400(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusBadRequest)
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL)
	_, err := Decode[generated.Agent](c.AgentsRetrieve(context.Background(), "agent_x", nil))
	e, ok := AsError(err)
	if !ok || e.Status != 400 || e.Type != "invalid_request_error" || e.Message != "HTTP 400" || hits.Load() != 1 {
		t.Fatalf("err %+v after %d hits", err, hits.Load())
	}
}

func TestRetriesConnectionErrorsThenReturnsConnectionError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens any more: every attempt is refused
	c, slept := newTestClient(t, "http://"+addr, WithMaxRetries(2))
	_, err = Decode[generated.Agent](c.AgentsRetrieve(context.Background(), "agent_x", nil))
	var ce *ConnectionError
	if !errors.As(err, &ce) || len(*slept) != 2 {
		t.Fatalf("err = %v, sleeps %v", err, *slept)
	}
}

func TestRetryDelayHonoursRetryAfterSeconds(t *testing.T) {
	h := http.Header{}
	h.Set("Retry-After", "2")
	if d := RetryDelay(0, h); d != 2*time.Second {
		t.Fatalf("RetryDelay = %v", d)
	}
	h.Set("Retry-After", "3600") // longer than a minute: ignored
	if d := RetryDelay(5, h); d > maxRetryDelay || d < maxRetryDelay*3/4 {
		t.Fatalf("RetryDelay = %v, want the capped backoff", d)
	}
}

func TestNewValidatesItsArguments(t *testing.T) {
	for _, tc := range []struct{ url, key string }{{"", "k"}, {"ftp://x", "k"}, {"http://x", " "}} {
		if _, err := New(tc.url, tc.key); err == nil {
			t.Errorf("New(%q, %q) succeeded", tc.url, tc.key)
		}
	}
	if _, err := New("http://x", "k", WithMaxRetries(-1)); err == nil {
		t.Error("negative maxRetries accepted")
	}
}
