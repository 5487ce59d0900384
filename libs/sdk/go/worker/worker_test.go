package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"mango.dev/sdk/mango"
)

const (
	envID  = "env_01JD2Y3QX9V5M8K7R6T4W2P0AB"
	workID = "work_01JD2Y3QX9V5M8K7R6T4W2P0AB"
	sessID = "sesn_01JD2Y3QX9V5M8K7R6T4W2P0AB"
)

// fakeMango is a real HTTP server speaking the Work and Session event protocol, with scripted answers.
type fakeMango struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex
	// log records "METHOD path?query" and the Authorization of every request.
	log   []string
	auth  []string
	polls []string // scripted poll bodies, in order (then {})
	// heartbeat answers: a status (200 uses the next timestamp) per call, then 200.
	heartbeats []int
	beats      []string // expected_last_heartbeat values received
	results    []map[string]any
	stops      []map[string]any
	posted     []map[string]any
	history    []map[string]any
	stream     chan map[string]any
	status     string
	acked      []string
	// session, when set, is the body of GET /v1/sessions/{id} (its status is replaced by status).
	session string
	fails   []map[string]any
	// skills are the versions the Skills routes serve, by "skill_id/version".
	skills map[string]*fakeSkill
	// skillErrs are scripted statuses answered by the next Skills requests (then the real answer).
	skillErrs []int
	// memory serves /v1/memory_stores/… (memory_test.go).
	memory *fakeMemory
}

// fakeSkill is one served Skill version: its metadata and its stored archive bytes.
type fakeSkill struct {
	meta    map[string]any
	archive []byte
}

func newFake(t *testing.T) *fakeMango {
	f := &fakeMango{t: t, stream: make(chan map[string]any, 16), status: "running", memory: newFakeMemory()}
	mux := http.NewServeMux()
	mux.Handle("/v1/memory_stores/", f.memory)
	mux.HandleFunc("GET /v1/environments/{env}/work/poll", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		body := "{}"
		if len(f.polls) > 0 {
			body, f.polls = f.polls[0], f.polls[1:]
		}
		f.mu.Unlock()
		if body == "{}" {
			time.Sleep(20 * time.Millisecond)
		}
		if strings.HasPrefix(body, "HTTP ") {
			var code int
			fmt.Sscanf(body, "HTTP %d", &code)
			writeErr(w, code)
			return
		}
		writeJSON(w, 200, body)
	})
	mux.HandleFunc("POST /v1/environments/{env}/work/{work}/ack", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.acked = append(f.acked, r.PathValue("work"))
		f.mu.Unlock()
		writeJSON(w, 200, workJSON(r.PathValue("work"), `{"type":"healthcheck"}`, "starting", "null"))
	})
	mux.HandleFunc("POST /v1/environments/{env}/work/{work}/heartbeat", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.beats = append(f.beats, r.URL.Query().Get("expected_last_heartbeat"))
		n := len(f.beats)
		code := 200
		if len(f.heartbeats) > 0 {
			code, f.heartbeats = f.heartbeats[0], f.heartbeats[1:]
		}
		f.mu.Unlock()
		if code == 412 {
			writeJSON(w, 412, `{"type":"error","error":{"type":"heartbeat_precondition_failed","message":"stale"},"request_id":"req_1"}`)
			return
		}
		if code >= 400 {
			writeErr(w, code) // e.g. 503 while the API's database restarts
			return
		}
		state := "active"
		if code == 299 {
			state = "stopping"
		}
		// Trailing zero milliseconds: a client that re-formats the timestamp would send ".67Z" and fail.
		writeJSON(w, 200, fmt.Sprintf(`{"type":"work_heartbeat","last_heartbeat":"2026-12-01T10:00:0%d.670Z","lease_extended":true,"state":%q,"ttl_seconds":3}`, n, state))
	})
	mux.HandleFunc("POST /v1/environments/{env}/work/{work}/result", func(w http.ResponseWriter, r *http.Request) {
		f.record(r, &f.results)
		writeJSON(w, 200, workJSON(r.PathValue("work"), `{"type":"healthcheck"}`, "stopped", "null"))
	})
	mux.HandleFunc("POST /v1/environments/{env}/work/{work}/stop", func(w http.ResponseWriter, r *http.Request) {
		f.record(r, &f.stops)
		w.WriteHeader(204)
	})
	mux.HandleFunc("GET /v1/sessions/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		data, _ := json.Marshal(f.history)
		f.mu.Unlock()
		writeJSON(w, 200, fmt.Sprintf(`{"data":%s,"next_page":null}`, data))
	})
	mux.HandleFunc("GET /v1/sessions/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		status, session := f.status, f.session
		f.mu.Unlock()
		if session != "" {
			var m map[string]any
			_ = json.Unmarshal([]byte(session), &m)
			m["status"] = status
			body, _ := json.Marshal(m)
			writeJSON(w, 200, string(body))
			return
		}
		writeJSON(w, 200, fmt.Sprintf(`{"id":%q,"type":"session","status":%q}`, sessID, status))
	})
	mux.HandleFunc("POST /v1/environments/{env}/work/{work}/fail", func(w http.ResponseWriter, r *http.Request) {
		f.record(r, &f.fails)
		writeJSON(w, 200, workJSON(r.PathValue("work"), fmt.Sprintf(`{"type":"session","id":%q}`, sessID), "stopped", "null"))
	})
	skill := func(w http.ResponseWriter, r *http.Request) *fakeSkill {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.skillErrs) > 0 {
			code := f.skillErrs[0]
			f.skillErrs = f.skillErrs[1:]
			writeErr(w, code)
			return nil
		}
		s := f.skills[r.PathValue("skill")+"/"+r.PathValue("version")]
		if s == nil {
			writeErr(w, 404)
		}
		return s
	}
	mux.HandleFunc("GET /v1/skills/{skill}/versions/{version}", func(w http.ResponseWriter, r *http.Request) {
		if s := skill(w, r); s != nil {
			body, _ := json.Marshal(s.meta)
			writeJSON(w, 200, string(body))
		}
	})
	mux.HandleFunc("GET /v1/skills/{skill}/versions/{version}/content", func(w http.ResponseWriter, r *http.Request) {
		if s := skill(w, r); s != nil {
			w.Header().Set("content-type", "application/gzip")
			w.WriteHeader(200)
			_, _ = w.Write(s.archive)
		}
	})
	mux.HandleFunc("POST /v1/sessions/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Events []map[string]any `json:"events"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		f.posted = append(f.posted, body.Events...)
		f.mu.Unlock()
		writeJSON(w, 200, `{"data":[]}`)
	})
	mux.HandleFunc("GET /v1/sessions/{id}/events/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case ev := <-f.stream:
				data, _ := json.Marshal(ev)
				fmt.Fprintf(w, "id: %v\nevent: message\ndata: %s\n\n", ev["seq"], data)
				w.(http.Flusher).Flush()
			}
		}
	})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.log = append(f.log, r.Method+" "+r.URL.RequestURI())
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// record appends the request's JSON body to into (under the lock).
func (f *fakeMango) record(r *http.Request, into *[]map[string]any) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	f.mu.Lock()
	*into = append(*into, body)
	f.mu.Unlock()
}

// endIdle makes the Session idle for the runner's confirming read.
func (f *fakeMango) endIdle() {
	f.mu.Lock()
	f.status = "idle"
	f.mu.Unlock()
}

// handle runs HandleItem with a 20 s bound.
func handle(w *EnvironmentWorker, item Item) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return w.HandleItem(ctx, item, nil)
}

func writeJSON(w http.ResponseWriter, code int, body string) {
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body)
}

func writeErr(w http.ResponseWriter, code int) {
	writeJSON(w, code, fmt.Sprintf(`{"type":"error","error":{"type":"x","message":"status %d"},"request_id":"req_1"}`, code))
}

func workJSON(id, data, state, secret string) string {
	return fmt.Sprintf(`{"id":%q,"type":"work","environment_id":%q,"data":%s,"state":%q,"secret":%s,"metadata":{},"result":null,`+
		`"created_at":"2026-12-01T10:00:00.000Z","acknowledged_at":null,"latest_heartbeat_at":null,"expires_at":null,"stopped_at":null}`,
		id, envID, data, state, secret)
}

func (f *fakeMango) secret() string {
	return mango.EncodeWorkSecret(mango.WorkSecret{SessionsToken: "mango_wt_token", APIBaseURL: f.srv.URL})
}

func (f *fakeMango) client(t *testing.T) *mango.Client {
	c, err := mango.New(f.srv.URL, "mango_ek_env", mango.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fakeMango) snapshot() fakeMango {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fakeMango{log: append([]string(nil), f.log...), auth: append([]string(nil), f.auth...), beats: append([]string(nil), f.beats...),
		results: f.results, stops: f.stops, posted: f.posted, acked: append([]string(nil), f.acked...), fails: f.fails}
}

func TestWorkPollerDispatchesBothVariantsRejectsUnknownAndAcks(t *testing.T) {
	f := newFake(t)
	f.polls = []string{
		"{}",
		workJSON("work_unknown", `{"type":"mystery"}`, "queued", `"s"`),
		workJSON("work_health", `{"type":"healthcheck"}`, "queued", fmt.Sprintf("%q", f.secret())),
		workJSON("work_session", fmt.Sprintf(`{"type":"session","id":%q}`, sessID), "queued", fmt.Sprintf("%q", f.secret())),
	}
	var errs []error
	p := &WorkPoller{Client: f.client(t), EnvironmentID: envID, WorkerID: "w-1", Block: time.Second,
		ReclaimOlderThan: 30 * time.Second, OnError: func(err error) { errs = append(errs, err) }}
	ctx := context.Background()
	first, err := p.Next(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := p.Next(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.WorkID != "work_health" || first.Type != TypeHealthcheck || first.Secret != f.secret() || first.Work == nil {
		t.Fatalf("first item: %+v", first)
	}
	if second.Type != TypeSession || second.SessionID != sessID {
		t.Fatalf("second item: %+v", second)
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrUnknownWorkType) {
		t.Fatalf("errors: %v", errs)
	}
	s := f.snapshot()
	if strings.Join(s.acked, ",") != "work_health,work_session" {
		t.Fatalf("acked %v (the unknown item must not be acknowledged)", s.acked)
	}
	if !strings.Contains(s.log[0], "block_ms=1000") || !strings.Contains(s.log[0], "reclaim_older_than_ms=30000") || !strings.Contains(s.log[0], "worker_id=w-1") {
		t.Fatalf("poll query: %s", s.log[0])
	}
	if s.auth[0] != "Bearer mango_ek_env" {
		t.Fatalf("poll auth %q", s.auth[0])
	}
}

func TestWorkPollerDrainNeverAcksAndFatalErrorsEndPolling(t *testing.T) {
	f := newFake(t)
	f.polls = []string{workJSON("work_health", `{"type":"healthcheck"}`, "queued", fmt.Sprintf("%q", f.secret()))}
	drain := make(chan struct{})
	close(drain)
	p := &WorkPoller{Client: f.client(t), EnvironmentID: envID}
	item, err := p.Next(context.Background(), drain)
	if item != nil || err != nil {
		t.Fatalf("drained Next = %v, %v", item, err)
	}
	if len(f.snapshot().acked) != 0 {
		t.Fatal("acked while draining")
	}

	f.polls = []string{"HTTP 503", "HTTP 401"}
	var slept []time.Duration
	p = &WorkPoller{Client: f.client(t), EnvironmentID: envID,
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }}
	_, err = p.Next(context.Background(), nil)
	if !errors.Is(err, mango.ErrAuthentication) || len(slept) != 1 {
		t.Fatalf("err %v, slept %v", err, slept)
	}
}

func TestHealthcheckCallbackGetsA10sContextAndItsOutcomeIsTheResult(t *testing.T) {
	for _, tc := range []struct {
		name    string
		check   func(context.Context) error
		status  string
		message string
	}{
		{"succeeds", func(ctx context.Context) error {
			dl, ok := ctx.Deadline()
			if !ok || time.Until(dl) > HealthcheckTimeout || time.Until(dl) < HealthcheckTimeout-2*time.Second {
				return fmt.Errorf("deadline %v", time.Until(dl))
			}
			return nil
		}, "succeeded", "healthcheck passed"},
		{"fails", func(context.Context) error { return errors.New("bash missing") }, "failed", "bash missing"},
		{"missing callback", nil, "failed", "no Healthcheck callback is configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Healthcheck: tc.check}
			item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeHealthcheck, Secret: f.secret()}
			if err := w.HandleItem(context.Background(), item, nil); err != nil {
				t.Fatal(err)
			}
			s := f.snapshot()
			if len(s.beats) == 0 || s.beats[0] != NoHeartbeat {
				t.Fatalf("first heartbeat %v", s.beats)
			}
			if len(s.results) != 1 || s.results[0]["status"] != tc.status || s.results[0]["message"] != tc.message {
				t.Fatalf("results %v", s.results)
			}
			for i, l := range s.log {
				if strings.Contains(l, "/heartbeat") || strings.Contains(l, "/result") {
					if s.auth[i] != "Bearer mango_wt_token" {
						t.Fatalf("%s used %q, not the Work token", l, s.auth[i])
					}
				}
			}
			if len(s.stops) != 0 {
				t.Fatal("a completed healthcheck is already stopped")
			}
		})
	}
}

func TestSessionItemRunsToolPostsResultRenewsExactlyAndForceStops(t *testing.T) {
	f := newFake(t)
	f.history = []map[string]any{{"id": "sevt_1", "type": "user.message", "seq": 1}}
	var calls []map[string]any
	bash := ToolFunc{ToolName: "bash", Fn: func(_ context.Context, in map[string]any) (string, error) {
		calls = append(calls, in)
		return "hello\n", nil
	}}
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Tools: []Tool{bash}, LeaseTTL: 3 * time.Second, MaxIdle: 1500 * time.Millisecond}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	go func() {
		time.Sleep(300 * time.Millisecond)
		f.stream <- map[string]any{"seq": 2, "id": "sevt_2", "type": "agent.tool_use", "name": "bash", "input": map[string]any{"command": "echo hello"}, "evaluated_permission": "allow"}
		f.stream <- map[string]any{"seq": 3, "id": "sevt_3", "type": "agent.tool_use", "name": "other_clients_tool", "input": map[string]any{}}
		f.stream <- map[string]any{"seq": 4, "id": "sevt_4", "type": "agent.tool_use", "name": "bash", "input": map[string]any{"command": "rm -rf /"}, "evaluated_permission": "ask"}
		f.stream <- map[string]any{"seq": 5, "id": "sevt_5", "type": "agent.tool_use", "name": "bash", "input": map[string]any{"command": "no"}, "evaluated_permission": "deny"}
		time.Sleep(300 * time.Millisecond)
		f.stream <- map[string]any{"seq": 6, "id": "sevt_6", "type": "user.tool_confirmation", "tool_use_id": "sevt_4", "result": "deny"}
		f.stream <- map[string]any{"seq": 7, "id": "sevt_7", "type": "session.status_idle", "stop_reason": map[string]any{"type": "end_turn"}}
		f.endIdle()
	}()
	if err := handle(w, item); err != nil {
		t.Fatal(err)
	}
	s := f.snapshot()
	if len(calls) != 1 || calls[0]["command"] != "echo hello" {
		t.Fatalf("tool calls %v (ask without allow, deny and other tools must not run)", calls)
	}
	if len(s.posted) != 1 || s.posted[0]["tool_use_id"] != "sevt_2" || s.posted[0]["type"] != "user.tool_result" || s.posted[0]["is_error"] != false {
		t.Fatalf("posted %v", s.posted)
	}
	content := s.posted[0]["content"].([]any)[0].(map[string]any)
	if content["text"] != "hello\n" {
		t.Fatalf("content %v", content)
	}
	if len(s.stops) != 1 || s.stops[0]["force"] != true {
		t.Fatalf("final stop %v", s.stops)
	}
	// Conditional renewal: each heartbeat echoes the previous last_heartbeat byte for byte.
	if len(s.beats) < 2 || s.beats[0] != NoHeartbeat || s.beats[1] != "2026-12-01T10:00:01.670Z" {
		t.Fatalf("heartbeats %v", s.beats)
	}
}

func TestLeaseLossCancelsTheRunningToolAndSkipsStop(t *testing.T) {
	f := newFake(t)
	f.heartbeats = []int{200, 412}
	started := make(chan struct{})
	var cancelled bool
	slow := ToolFunc{ToolName: "bash", Fn: func(ctx context.Context, _ map[string]any) (string, error) {
		close(started)
		<-ctx.Done()
		cancelled = true
		return "", ctx.Err()
	}}
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Tools: []Tool{slow}, LeaseTTL: 3 * time.Second}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	f.stream <- map[string]any{"seq": 1, "id": "sevt_1", "type": "agent.tool_use", "name": "bash", "input": map[string]any{}}
	err := handle(w, item)
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("err = %v, want ErrLeaseLost", err)
	}
	<-started
	s := f.snapshot()
	if !cancelled || len(s.posted) != 0 || len(s.stops) != 0 {
		t.Fatalf("cancelled=%v posted=%v stops=%v", cancelled, s.posted, s.stops)
	}
}

func TestStopRequestedOnHeartbeatEndsTheItemWithAForcedStop(t *testing.T) {
	f := newFake(t)
	f.heartbeats = []int{200, 299}
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, LeaseTTL: 3 * time.Second}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	if err := handle(w, item); err != nil {
		t.Fatal(err)
	}
	if s := f.snapshot(); len(s.stops) != 1 || s.stops[0]["force"] != true {
		t.Fatalf("stops %v", s.stops)
	}
}

func TestFirstHeartbeatIsRetriedThroughTransientFailuresButNotA412(t *testing.T) {
	f := newFake(t)
	f.heartbeats = []int{503, 429, 200}
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Healthcheck: func(context.Context) error { return nil }}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeHealthcheck, Secret: f.secret()}
	if err := w.HandleItem(context.Background(), item, nil); err != nil {
		t.Fatal(err)
	}
	s := f.snapshot()
	if len(s.beats) < 3 || s.beats[0] != NoHeartbeat || s.beats[1] != NoHeartbeat || s.beats[2] != NoHeartbeat {
		t.Fatalf("first heartbeats %v", s.beats)
	}
	if len(s.results) != 1 || s.results[0]["status"] != "succeeded" {
		t.Fatalf("results %v", s.results)
	}

	refused := newFake(t)
	refused.heartbeats = []int{412}
	w = &EnvironmentWorker{Client: refused.client(t), EnvironmentID: envID, Healthcheck: func(context.Context) error { return nil }}
	item.Secret = refused.secret()
	err := w.HandleItem(context.Background(), item, nil)
	if !errors.Is(err, mango.ErrPreconditionFailed) {
		t.Fatalf("a 412 first heartbeat: %v", err)
	}
	if s := refused.snapshot(); len(s.beats) != 1 || len(s.results) != 0 {
		t.Fatalf("a 412 is not retried and nothing runs: beats %v results %v", s.beats, s.results)
	}
}

func TestItemFromEnvReadsTheNarrowIdentity(t *testing.T) {
	t.Setenv("MANGO_WORK_ID", workID)
	t.Setenv("MANGO_ENVIRONMENT_ID", envID)
	t.Setenv("MANGO_WORK_TYPE", "session")
	t.Setenv("MANGO_SESSION_ID", sessID)
	item, err := ItemFromEnv("secret")
	if err != nil || item.WorkID != workID || item.EnvironmentID != envID || item.Type != TypeSession || item.SessionID != sessID || item.Secret != "secret" {
		t.Fatalf("%+v %v", item, err)
	}
	t.Setenv("MANGO_WORK_TYPE", "healthcheck")
	if _, err := ItemFromEnv("secret"); err == nil {
		t.Fatal("a healthcheck with MANGO_SESSION_ID must be rejected")
	}
	t.Setenv("MANGO_SESSION_ID", "")
	if item, err := ItemFromEnv("secret"); err != nil || item.Type != TypeHealthcheck {
		t.Fatalf("%+v %v", item, err)
	}
	t.Setenv("MANGO_WORK_TYPE", "mystery")
	if _, err := ItemFromEnv("secret"); !errors.Is(err, ErrUnknownWorkType) {
		t.Fatalf("err %v", err)
	}
	t.Setenv("MANGO_WORK_TYPE", "session")
	if _, err := ItemFromEnv("secret"); err == nil {
		t.Fatal("session Work without MANGO_SESSION_ID must be rejected")
	}
	t.Setenv("MANGO_SESSION_ID", sessID)
	if _, err := ItemFromEnv(""); err == nil {
		t.Fatal("a missing secret must be rejected")
	}
}

func TestSessionToolRunnerAnswersOnlyItsOwnCustomToolsWithCustomToolResult(t *testing.T) {
	f := newFake(t)
	// History: an answered custom call (never run again) and a sandbox call named like the custom tool.
	f.history = []map[string]any{
		{"id": "sevt_1", "type": "user.message", "seq": 1},
		{"id": "sevt_2", "type": "agent.custom_tool_use", "name": "lookup_order", "input": map[string]any{"order": "old"}, "seq": 2},
		{"id": "sevt_3", "type": "user.custom_tool_result", "custom_tool_use_id": "sevt_2", "seq": 3},
	}
	var mu sync.Mutex
	var orders []any
	lookup := ToolFunc{ToolName: "lookup_order", Fn: func(_ context.Context, in map[string]any) (string, error) {
		mu.Lock()
		orders = append(orders, in["order"])
		mu.Unlock()
		return "shipped", nil
	}}
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, CustomTools: []Tool{lookup}, LeaseTTL: 3 * time.Second, MaxIdle: 1500 * time.Millisecond}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	go func() {
		time.Sleep(300 * time.Millisecond)
		f.stream <- map[string]any{"seq": 4, "id": "sevt_4", "type": "agent.custom_tool_use", "name": "lookup_order", "input": map[string]any{"order": "A-1"}}
		f.stream <- map[string]any{"seq": 5, "id": "sevt_5", "type": "agent.custom_tool_use", "name": "the_apps_tool", "input": map[string]any{}}
		// A sandbox call with the custom tool's name is not a custom call: CustomTools never run it.
		f.stream <- map[string]any{"seq": 6, "id": "sevt_6", "type": "agent.tool_use", "name": "lookup_order", "input": map[string]any{"order": "B-2"}, "evaluated_permission": "allow"}
		f.stream <- map[string]any{"seq": 7, "id": "sevt_7", "type": "session.status_idle", "stop_reason": map[string]any{"type": "requires_action"}}
		time.Sleep(500 * time.Millisecond)
		f.stream <- map[string]any{"seq": 8, "id": "sevt_8", "type": "session.status_idle", "stop_reason": map[string]any{"type": "end_turn"}}
		f.endIdle()
	}()
	if err := handle(w, item); err != nil {
		t.Fatal(err)
	}
	s := f.snapshot()
	mu.Lock()
	defer mu.Unlock()
	if len(orders) != 1 || orders[0] != "A-1" {
		t.Fatalf("custom calls run %v (the answered one, the application's and the sandbox one must not run)", orders)
	}
	if len(s.posted) != 1 {
		t.Fatalf("posted %v", s.posted)
	}
	p := s.posted[0]
	if p["type"] != "user.custom_tool_result" || p["custom_tool_use_id"] != "sevt_4" || p["is_error"] != false || p["tool_use_id"] != nil {
		t.Fatalf("posted %v", p)
	}
	if text := p["content"].([]any)[0].(map[string]any)["text"]; text != "shipped" {
		t.Fatalf("content %v", text)
	}
}
