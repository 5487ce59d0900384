package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The worker contract of December 2026 (docs/worker-contract.md) in the Go runner.

func TestContractDefaultsAreUpstreamFigures(t *testing.T) {
	if DefaultToolTimeout != 325*time.Second {
		t.Fatalf("DefaultToolTimeout = %v, want 325s", DefaultToolTimeout)
	}
	if DefaultMaxConcurrentCalls != 1 {
		t.Fatalf("DefaultMaxConcurrentCalls = %d, want 1", DefaultMaxConcurrentCalls)
	}
}

// gatedTool blocks each call until the test releases it and records the calls, their Thread (CallOf) and
// the peak of calls running at once.
type gatedTool struct {
	mu      sync.Mutex
	started []string
	threads []string
	running int
	peak    int
	gates   map[string]chan struct{}
	starts  chan string
}

func newGatedTool() *gatedTool {
	return &gatedTool{gates: map[string]chan struct{}{}, starts: make(chan string, 16)}
}

func (g *gatedTool) Name() string { return "bash" }

func (g *gatedTool) gate(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gates[id] == nil {
		g.gates[id] = make(chan struct{})
	}
	return g.gates[id]
}

func (g *gatedTool) Run(ctx context.Context, _ map[string]any) (string, error) {
	call, _ := CallOf(ctx)
	gate := g.gate(call.ID)
	g.mu.Lock()
	g.started = append(g.started, call.ID)
	g.threads = append(g.threads, call.ThreadID)
	g.running++
	g.peak = max(g.peak, g.running)
	g.mu.Unlock()
	g.starts <- call.ID
	defer func() {
		g.mu.Lock()
		g.running--
		g.mu.Unlock()
	}()
	select {
	case <-gate:
		return "ran " + call.ID, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (g *gatedTool) release(id string) { close(g.gate(id)) }

// next waits for the next call to start (bounded, so a wrong schedule fails instead of hanging).
func (g *gatedTool) next(t *testing.T) string {
	t.Helper()
	select {
	case id := <-g.starts:
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("no call started")
		return ""
	}
}

// noneStarted asserts that no further call starts while the runner handles one more stream event.
func (g *gatedTool) noneStarted(t *testing.T, f *fakeMango, seq int) {
	t.Helper()
	f.stream <- map[string]any{"seq": seq, "id": fmt.Sprintf("sevt_n%d", seq), "type": "agent.thinking"}
	select {
	case id := <-g.starts:
		t.Fatalf("call %s started", id)
	default:
	}
}

func threadCall(seq int, id, thread string) map[string]any {
	e := map[string]any{"seq": seq, "id": id, "type": "agent.tool_use", "name": "bash", "input": map[string]any{}, "evaluated_permission": "allow"}
	if thread != "" {
		e["session_thread_id"] = thread
	}
	return e
}

func startRunner(t *testing.T, f *fakeMango, r *SessionToolRunner) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = r.Run(ctx, nil)
	}()
	return func() {
		cancel()
		<-done
	}
}

func TestByDefaultCallsOfDifferentThreadsRunOneAtATimeInOrder(t *testing.T) {
	f := newFake(t)
	tool := newGatedTool()
	stop := startRunner(t, f, &SessionToolRunner{Client: f.client(t), SessionID: sessID, Tools: []Tool{tool}})
	defer stop()
	f.stream <- threadCall(1, "sevt_a", "sthr_one")
	f.stream <- threadCall(2, "sevt_b", "sthr_two")
	if id := tool.next(t); id != "sevt_a" {
		t.Fatalf("first call %s", id)
	}
	tool.noneStarted(t, f, 3)
	tool.release("sevt_a")
	if id := tool.next(t); id != "sevt_b" {
		t.Fatalf("second call %s", id)
	}
	tool.release("sevt_b")
	waitPosted(t, f, 2)
	if tool.peak != 1 {
		t.Fatalf("peak %d, want 1", tool.peak)
	}
}

func TestMaxConcurrentCallsRunsDifferentThreadsSideBySideAndOneThreadInOrder(t *testing.T) {
	f := newFake(t)
	tool := newGatedTool()
	stop := startRunner(t, f, &SessionToolRunner{Client: f.client(t), SessionID: sessID, Tools: []Tool{tool}, MaxConcurrentCalls: 2})
	defer stop()
	f.stream <- threadCall(1, "sevt_a1", "sthr_one")
	f.stream <- threadCall(2, "sevt_a2", "sthr_one")
	f.stream <- threadCall(3, "sevt_b1", "sthr_two")
	got := map[string]bool{tool.next(t): true, tool.next(t): true}
	if !got["sevt_a1"] || !got["sevt_b1"] {
		t.Fatalf("started %v, want a1 and b1 side by side (a2 waits for a1, its Thread's call)", got)
	}
	tool.noneStarted(t, f, 4)
	tool.release("sevt_a1")
	if id := tool.next(t); id != "sevt_a2" {
		t.Fatalf("third call %s", id)
	}
	tool.release("sevt_a2")
	tool.release("sevt_b1")
	waitPosted(t, f, 3)
	if tool.peak != 2 {
		t.Fatalf("peak %d, want 2", tool.peak)
	}
	tool.mu.Lock()
	defer tool.mu.Unlock()
	for i, id := range tool.started {
		if want := map[string]string{"sevt_a1": "sthr_one", "sevt_a2": "sthr_one", "sevt_b1": "sthr_two"}[id]; tool.threads[i] != want {
			t.Fatalf("CallOf thread for %s = %q, want %q", id, tool.threads[i], want)
		}
	}
}

func TestACallOutlivingToolTimeoutIsAnsweredAsAnError(t *testing.T) {
	f := newFake(t)
	tool := newGatedTool()
	stop := startRunner(t, f, &SessionToolRunner{Client: f.client(t), SessionID: sessID, Tools: []Tool{tool}, ToolTimeout: 50 * time.Millisecond})
	defer stop()
	f.stream <- threadCall(1, "sevt_slow", "")
	waitPosted(t, f, 1)
	s := f.snapshot()
	if s.posted[0]["tool_use_id"] != "sevt_slow" || s.posted[0]["is_error"] != true {
		t.Fatalf("posted %v", s.posted)
	}
}

func TestOnIdleRunsWhenTheSessionGoesIdleNeverBesideAfterCall(t *testing.T) {
	f := newFake(t)
	tool := newGatedTool()
	var mu sync.Mutex
	var order []string
	inHook := 0
	record := func(name string) func(context.Context) {
		return func(context.Context) {
			mu.Lock()
			inHook++
			overlap := inHook > 1
			order = append(order, name)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond) // a hook that takes a while (a Memory pass)
			mu.Lock()
			inHook--
			if overlap {
				order = append(order, "overlap")
			}
			mu.Unlock()
		}
	}
	idled := make(chan struct{}, 4)
	onIdle := record("idle")
	r := &SessionToolRunner{Client: f.client(t), SessionID: sessID, Tools: []Tool{tool}, AfterCall: record("after"),
		OnIdle: func(ctx context.Context) { onIdle(ctx); idled <- struct{}{} }}
	stop := startRunner(t, f, r)
	defer stop()
	f.stream <- threadCall(1, "sevt_a", "")
	tool.next(t)
	tool.release("sevt_a")
	f.stream <- map[string]any{"seq": 2, "id": "sevt_i", "type": "session.status_idle", "stop_reason": map[string]any{"type": "end_turn"}}
	select {
	case <-idled:
	case <-time.After(10 * time.Second):
		t.Fatal("OnIdle did not run")
	}
	waitPosted(t, f, 1)
	for i := 0; i < 1000; i++ {
		mu.Lock()
		n := len(order)
		mu.Unlock()
		if n >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 2 || order[0] == "overlap" || order[1] == "overlap" {
		t.Fatalf("hooks %v, want after and idle once each, never overlapping", order)
	}
}

func waitPosted(t *testing.T, f *fakeMango, n int) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if len(f.snapshot().posted) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("posted %v, want %d results", f.snapshot().posted, n)
}

func TestMemoryIsUploadedWhenTheSessionGoesIdle(t *testing.T) {
	f := memoryFake(t)
	f.history = []map[string]any{{"id": "sevt_1", "type": "user.message", "seq": 1}}
	root := t.TempDir()
	notes := filepath.Join(root, "notes")
	bash := ToolFunc{ToolName: "bash", Fn: func(context.Context, map[string]any) (string, error) {
		return "ok", os.WriteFile(filepath.Join(notes, "at-idle.md"), []byte("uploaded at idle"), 0o600)
	}}
	// An hour's cadence: no timer pass and no pass after the call; the Session stays "running" for the
	// runner's confirming read, so the activation does not end (no final sync, no flush) until endIdle.
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Tools: []Tool{bash}, LeaseTTL: 3 * time.Second,
		MaxIdle: 200 * time.Millisecond, MemoryRoot: root, MemorySyncInterval: time.Hour}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	done := make(chan error, 1)
	go func() { done <- handle(w, item) }()
	f.stream <- toolCall(2, "x")
	waitPosted(t, f, 1)
	if got := f.memory.contents(storeA)["/at-idle.md"]; got != "" {
		t.Fatalf("uploaded before the idle: %q", got)
	}
	f.stream <- map[string]any{"seq": 3, "id": "sevt_3", "type": "session.status_idle", "stop_reason": map[string]any{"type": "end_turn"}}
	for i := 0; i < 1000 && f.memory.contents(storeA)["/at-idle.md"] == ""; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if got := f.memory.contents(storeA)["/at-idle.md"]; got != "uploaded at idle" {
		t.Fatalf("remote at-idle.md = %q after the idle", got)
	}
	select {
	case err := <-done:
		t.Fatalf("the activation ended before the Session was idle on the server: %v", err)
	default:
	}
	f.endIdle()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
