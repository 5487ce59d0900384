package mango

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func frames(events ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(events); i += 2 {
		fmt.Fprintf(&b, "id: %s\nevent: %s\ndata: {\"id\":\"sevt_%s\",\"type\":%q}\n\n", events[i], events[i+1], events[i], events[i+1])
	}
	return b.String()
}

// A tiny local server drops the first connection after two events; the client must reconnect with
// Last-Event-ID, skip the replayed duplicate and stop after session.deleted.
func TestStreamEventsReconnectsWithLastEventIDAfterADrop(t *testing.T) {
	var mu sync.Mutex
	var lastIDs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		n := len(lastIDs)
		mu.Unlock()
		if r.URL.Path != "/v1/sessions/sesn_1/events/stream" || r.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("request %s accept %q", r.URL.Path, r.Header.Get("Accept"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 1 {
			_, _ = w.Write([]byte("event: ping\ndata: {}\n\n" + frames("1", "user.message", "2", "user.message")))
			return
		}
		_, _ = w.Write([]byte(frames("2", "user.message", "3", "user.interrupt", "4", "session.deleted")))
	}))
	defer srv.Close()
	c, slept := newTestClient(t, srv.URL)
	var got []string
	for ev, err := range c.StreamEvents(context.Background(), "sesn_1", StreamOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.ID+":"+ev.Type)
	}
	if strings.Join(got, ",") != "1:user.message,2:user.message,3:user.interrupt,4:session.deleted" {
		t.Fatalf("events %v", got)
	}
	if strings.Join(lastIDs, ",") != ",2" || len(*slept) != 1 {
		t.Fatalf("Last-Event-ID per connection %q, sleeps %v", lastIDs, *slept)
	}
}

func TestStreamEventsGivesUpAfterMaxRetriesAndDoesNotRetryA404(t *testing.T) {
	var hits int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		if r.Header.Get("Last-Event-ID") != "7" {
			t.Errorf("Last-Event-ID = %q", r.Header.Get("Last-Event-ID"))
		}
		if strings.Contains(r.URL.Path, "missing") {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"type":"error","error":{"type":"not_found_error","message":"no"},"request_id":"req_9"}`))
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, WithMaxRetries(2))
	var last error
	for _, err := range c.StreamEvents(context.Background(), "sesn_1", StreamOptions{LastEventID: "7"}) {
		last = err
	}
	if !errors.Is(last, ErrServer) || hits != 3 {
		t.Fatalf("err %v after %d connections", last, hits)
	}
	hits = 0
	for _, err := range c.StreamEvents(context.Background(), "missing", StreamOptions{LastEventID: "7"}) {
		last = err
	}
	if e, ok := AsError(last); !ok || !errors.Is(last, ErrNotFound) || e.RequestID != "req_9" || hits != 1 {
		t.Fatalf("err %v after %d connections", last, hits)
	}
}
