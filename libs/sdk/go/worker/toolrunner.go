package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"mango.dev/sdk/generated"
	"mango.dev/sdk/mango"
)

// Tool is one local tool the runner dispatches agent.tool_use calls to, by name.
type Tool interface {
	Name() string
	// Run executes one call. An error becomes an is_error result carrying its message.
	Run(ctx context.Context, input map[string]any) (string, error)
}

// ToolFunc adapts a function to Tool.
type ToolFunc struct {
	ToolName string
	Fn       func(ctx context.Context, input map[string]any) (string, error)
}

func (t ToolFunc) Name() string { return t.ToolName }
func (t ToolFunc) Run(ctx context.Context, input map[string]any) (string, error) {
	return t.Fn(ctx, input)
}

// Why a SessionToolRunner stopped.
const (
	StopIdle       = "idle"       // the Session stayed idle (no pending call) for MaxIdle
	StopTerminated = "terminated" // session.status_terminated
	StopDeleted    = "deleted"    // session.deleted
	StopCancelled  = "cancelled"  // ctx was cancelled (lease lost, stop requested)
	StopRefused    = "refused"    // the Work token was refused (4xx): the lease is gone
	StopDrained    = "drained"    // drain was closed and the running calls finished
)

// SessionToolRunner runs the local tools of one Session with a Work token client. It reconciles the
// event history first (calls already answered or closed are never run twice), then follows the event
// stream, resuming with Last-Event-ID after a drop. A call whose evaluated_permission is "ask" waits
// for a persisted user.tool_confirmation "allow"; "deny" is never run. Calls for tools it does not
// have are left to other clients. Each result is posted as user.tool_result.
//
// CustomTools are the operator's custom tools (docs/operator-guide.md "Operator custom tools"): an
// agent.custom_tool_use whose name is one of theirs runs here and is answered with
// user.custom_tool_result; any other custom call stays with the application (requires_action).
type SessionToolRunner struct {
	Client      *mango.Client // bound to the Work token
	SessionID   string
	Tools       []Tool
	CustomTools []Tool
	// MaxIdle stops the runner after the Session has been idle this long with nothing to run (0: 60 s).
	MaxIdle time.Duration
	// ToolTimeout bounds one call (0: 120 s).
	ToolTimeout time.Duration
	// OnError sees stream interruptions and failed result submissions.
	OnError func(error)
	// AfterCall, when set, runs after each call whose result was posted, before the next call starts
	// (EnvironmentWorker: a Memory sync pass when one is due).
	AfterCall func(ctx context.Context)

	mu       sync.Mutex
	handled  map[string]bool
	seen     map[string]bool
	answered map[string]bool
	closed   map[string]bool
	verdicts map[string]string
	held     map[string]runnerEvent
	queue    chan runnerEvent
	pending  int
	idleAt   time.Time // when the last non-neutral event was a finished-turn idle (zero: not idle)
	stop     string
	cancel   context.CancelFunc
	inflight map[string]context.CancelFunc
	// Posted lists the tool_use ids whose results this runner posted, in order.
	Posted []string
}

type runnerEvent struct {
	ID                  string         `json:"id"`
	Type                string         `json:"type"`
	Name                string         `json:"name"`
	Input               map[string]any `json:"input"`
	ToolUseID           string         `json:"tool_use_id"`
	CustomToolUseID     string         `json:"custom_tool_use_id"`
	Result              string         `json:"result"`
	EvaluatedPermission *string        `json:"evaluated_permission"`
	SessionThreadID     string         `json:"session_thread_id"`
	StopReason          *struct {
		Type string `json:"type"`
	} `json:"stop_reason"`
}

// Run returns why it stopped. drain (may be nil) lets running calls finish and then stops.
func (r *SessionToolRunner) Run(ctx context.Context, drain <-chan struct{}) (string, error) {
	r.init()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()

	done := make(chan struct{})
	go r.execLoop(ctx, done)
	if drain != nil {
		go func() {
			select {
			case <-drain:
				r.drainNow()
			case <-ctx.Done():
			}
		}()
	}
	idleCheck := time.NewTicker(200 * time.Millisecond)
	defer idleCheck.Stop()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-idleCheck.C:
				r.checkIdle(ctx)
			}
		}
	}()

	lastID := ""
	for attempt := 0; r.stopped() == ""; {
		if err := r.reconcile(ctx); err != nil {
			if r.stopped() != "" || ctx.Err() != nil {
				break
			}
			if refused(err) {
				r.setStop(StopRefused)
				break
			}
			r.report(fmt.Errorf("history: %w", err))
			_ = sleepCtx(ctx, backoff(attempt))
			attempt++
			continue
		}
		zero := 0
		for ev, err := range r.Client.Sessions.Events.Stream(ctx, r.SessionID, mango.StreamOptions{LastEventID: lastID, MaxRetries: &zero}) {
			if err != nil {
				if r.stopped() == "" && ctx.Err() == nil {
					if refused(err) {
						r.setStop(StopRefused)
					} else {
						r.report(fmt.Errorf("event stream: %w", err))
					}
				}
				break
			}
			attempt = 0
			lastID = ev.ID
			var e runnerEvent
			if json.Unmarshal(ev.Data, &e) == nil {
				r.handle(e)
			}
			if r.stopped() != "" {
				break
			}
		}
		if r.stopped() != "" || ctx.Err() != nil {
			break
		}
		_ = sleepCtx(ctx, backoff(attempt))
		attempt++
	}
	if r.stopped() == "" {
		r.setStop(StopCancelled)
	}
	reason := r.stopped()
	if reason != StopDrained {
		r.cancelInflight()
	}
	close(r.queue)
	<-done
	return reason, nil
}

func (r *SessionToolRunner) init() {
	r.handled, r.seen, r.answered, r.closed = map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	r.verdicts, r.held = map[string]string{}, map[string]runnerEvent{}
	r.inflight = map[string]context.CancelFunc{}
	r.queue = make(chan runnerEvent, 1024)
}

func (r *SessionToolRunner) reconcile(ctx context.Context) error {
	limit := 1000
	var history []runnerEvent
	for raw, err := range r.Client.Sessions.Events.ListAll(ctx, r.SessionID, &generated.SessionsEventsListParams{Limit: &limit}) {
		if err != nil {
			return err
		}
		b, _ := json.Marshal(raw)
		var e runnerEvent
		if json.Unmarshal(b, &e) == nil {
			history = append(history, e)
		}
	}
	r.mu.Lock()
	open := map[string]bool{}
	for _, e := range history {
		r.handled[e.ID] = true
		switch e.Type {
		case "agent.tool_use", "agent.custom_tool_use":
			open[e.ID] = true
		case "user.tool_result", "user.custom_tool_result":
			r.answered[e.answeredID()] = true
			delete(open, e.answeredID())
		case "user.tool_confirmation":
			r.verdicts[e.ToolUseID] = e.Result
		}
		if closesOpenCalls(e) {
			for id := range open {
				r.closed[id] = true
			}
			open = map[string]bool{}
		}
	}
	r.mu.Unlock()
	for _, e := range history {
		switch e.Type {
		case "agent.tool_use", "agent.custom_tool_use":
			r.see(e)
		case "session.status_terminated":
			r.setStop(StopTerminated)
		}
	}
	for i := len(history) - 1; i >= 0; i-- {
		if !neutral(history[i].Type) {
			r.clock(history[i])
			break
		}
	}
	return nil
}

func (r *SessionToolRunner) handle(e runnerEvent) {
	r.mu.Lock()
	if e.ID != "" {
		if r.handled[e.ID] {
			r.mu.Unlock()
			return
		}
		r.handled[e.ID] = true
	}
	var release *runnerEvent
	switch e.Type {
	case "user.tool_confirmation":
		r.verdicts[e.ToolUseID] = e.Result
		if held, ok := r.held[e.ToolUseID]; ok {
			delete(r.held, e.ToolUseID)
			if e.Result == "allow" {
				release = &held
			}
		}
	case "user.tool_result", "user.custom_tool_result":
		r.answered[e.answeredID()] = true
		delete(r.held, e.answeredID())
	}
	r.mu.Unlock()
	switch e.Type {
	case "agent.tool_use", "agent.custom_tool_use":
		r.see(e)
	case "session.status_terminated":
		r.setStop(StopTerminated)
		return
	case "session.deleted":
		r.setStop(StopDeleted)
		return
	}
	if release != nil {
		r.enqueue(*release)
	}
	if closesOpenCalls(e) {
		r.closeOpen()
	}
	if !neutral(e.Type) {
		r.clock(e)
	}
}

func (r *SessionToolRunner) see(e runnerEvent) {
	r.mu.Lock()
	if r.seen[e.ID] || r.answered[e.ID] || r.closed[e.ID] {
		r.mu.Unlock()
		return
	}
	r.seen[e.ID] = true
	verdict, hasVerdict := r.verdicts[e.ID]
	perm := ""
	if e.EvaluatedPermission != nil {
		perm = *e.EvaluatedPermission
	}
	r.mu.Unlock()
	switch {
	case perm == "deny":
	case hasVerdict:
		if verdict == "allow" {
			r.enqueue(e)
		}
	case perm == "" || perm == "allow":
		r.enqueue(e)
	default: // ask, or anything unknown: fail closed until a persisted allow
		r.mu.Lock()
		r.held[e.ID] = e
		r.mu.Unlock()
	}
}

// tool is the local handler of a call: custom calls only from CustomTools, the others only from Tools.
func (r *SessionToolRunner) tool(e runnerEvent) Tool {
	tools := r.Tools
	if e.Type == "agent.custom_tool_use" {
		tools = r.CustomTools
	}
	for _, t := range tools {
		if t.Name() == e.Name {
			return t
		}
	}
	return nil
}

// answeredID is the call a result answers.
func (e runnerEvent) answeredID() string {
	if e.Type == "user.custom_tool_result" {
		return e.CustomToolUseID
	}
	return e.ToolUseID
}

func (r *SessionToolRunner) enqueue(e runnerEvent) {
	if r.tool(e) == nil {
		return // another client owns it
	}
	r.mu.Lock()
	if r.stop != "" {
		r.mu.Unlock()
		return
	}
	r.pending++
	r.mu.Unlock()
	r.queue <- e
}

func (r *SessionToolRunner) execLoop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	for e := range r.queue {
		r.execute(ctx, e)
		r.mu.Lock()
		r.pending--
		r.mu.Unlock()
		r.afterCall()
	}
}

func (r *SessionToolRunner) afterCall() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop == StopDrained+"-pending" && r.pending == 0 {
		r.stop = StopDrained
		if r.cancel != nil {
			r.cancel()
		}
	}
}

func (r *SessionToolRunner) execute(ctx context.Context, e runnerEvent) {
	r.mu.Lock()
	skip := (r.stop != "" && r.stop != StopDrained+"-pending") || r.closed[e.ID] || r.answered[e.ID]
	timeout := r.ToolTimeout
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	r.inflight[e.ID] = cancel
	r.mu.Unlock()
	defer func() {
		cancel()
		r.mu.Lock()
		delete(r.inflight, e.ID)
		r.mu.Unlock()
	}()
	if skip {
		return
	}
	input := e.Input
	if input == nil {
		input = map[string]any{}
	}
	text, err := r.tool(e).Run(callCtx, input)
	isError := err != nil
	if err != nil {
		text = "Error: " + err.Error()
	}
	r.mu.Lock()
	closed := r.closed[e.ID]
	refusedNow := r.stop == StopRefused
	r.mu.Unlock()
	if ctx.Err() != nil || refusedNow || closed || errors.Is(callCtx.Err(), context.Canceled) {
		return // cancelled, lease lost or the call was closed (interrupt): not posted
	}
	r.send(ctx, e, text, isError)
	if r.AfterCall != nil && ctx.Err() == nil {
		r.AfterCall(ctx)
	}
}

func (r *SessionToolRunner) send(ctx context.Context, e runnerEvent, text string, isError bool) {
	result := map[string]any{
		"type":        "user.tool_result",
		"tool_use_id": e.ID,
		"is_error":    isError,
		"content":     []map[string]any{{"type": "text", "text": resultText(text)}},
	}
	if e.Type == "agent.custom_tool_use" {
		delete(result, "tool_use_id")
		result["type"] = "user.custom_tool_result"
		result["custom_tool_use_id"] = e.ID
	}
	if e.SessionThreadID != "" {
		result["session_thread_id"] = e.SessionThreadID
	}
	body, _ := json.Marshal(map[string]any{"events": []any{result}})
	deadline := time.Now().Add(60 * time.Second)
	for n := 0; ; n++ {
		err := mango.Check(r.Client.SessionsEventsSendWithBody(ctx, r.SessionID, "application/json", bytes.NewReader(body)))
		if err == nil {
			r.mu.Lock()
			r.answered[e.ID] = true
			r.Posted = append(r.Posted, e.ID)
			r.mu.Unlock()
			return
		}
		if ctx.Err() != nil {
			return
		}
		if refused(err) || time.Now().After(deadline) {
			r.report(fmt.Errorf("tool result %s not accepted: %w", e.ID, err))
			if errors.Is(err, mango.ErrAuthentication) {
				r.setStop(StopRefused)
			}
			return
		}
		_ = sleepCtx(ctx, backoff(n))
	}
}

func (r *SessionToolRunner) closeOpen() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range r.seen {
		if !r.answered[id] && !r.closed[id] {
			r.closed[id] = true
			delete(r.held, id)
			if cancel, ok := r.inflight[id]; ok {
				cancel()
			}
		}
	}
}

func (r *SessionToolRunner) clock(e runnerEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Type == "session.status_idle" && (e.StopReason == nil || e.StopReason.Type != "requires_action") {
		if r.idleAt.IsZero() {
			r.idleAt = time.Now()
		}
		return
	}
	r.idleAt = time.Time{}
}

// checkIdle stops the runner once the Session has been idle for MaxIdle with nothing held or running,
// after confirming the idle status with a fresh read of the Session.
func (r *SessionToolRunner) checkIdle(ctx context.Context) {
	maxIdle := r.MaxIdle
	if maxIdle <= 0 {
		maxIdle = 60 * time.Second
	}
	r.mu.Lock()
	ready := !r.idleAt.IsZero() && time.Since(r.idleAt) >= maxIdle && len(r.held) == 0 && r.pending == 0 && r.stop == ""
	r.mu.Unlock()
	if !ready {
		return
	}
	s, err := r.Client.Sessions.Retrieve(ctx, r.SessionID)
	if err != nil || s.Status != "idle" {
		r.mu.Lock()
		r.idleAt = time.Now()
		r.mu.Unlock()
		return
	}
	r.mu.Lock()
	idle := r.pending == 0
	r.mu.Unlock()
	if idle {
		r.setStop(StopIdle)
	}
}

func (r *SessionToolRunner) drainNow() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop != "" {
		return
	}
	if r.pending == 0 {
		r.stop = StopDrained
		r.cancel()
		return
	}
	r.stop = StopDrained + "-pending"
}

func (r *SessionToolRunner) setStop(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop == "" || r.stop == StopDrained+"-pending" {
		r.stop = reason
	}
	if r.cancel != nil {
		r.cancel()
	}
}

func (r *SessionToolRunner) stopped() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop == StopDrained+"-pending" {
		return ""
	}
	return r.stop
}

func (r *SessionToolRunner) cancelInflight() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, cancel := range r.inflight {
		cancel()
	}
}

func (r *SessionToolRunner) report(err error) {
	if r.OnError != nil {
		r.OnError(err)
	}
}

func closesOpenCalls(e runnerEvent) bool {
	if e.Type == "user.interrupt" {
		return true
	}
	return e.Type == "session.status_idle" && (e.StopReason == nil || e.StopReason.Type != "requires_action")
}

func neutral(t string) bool {
	return t == "user.tool_confirmation" || t == "session.thread_status_terminated"
}

// resultText: NUL characters (PostgreSQL text cannot hold them) become U+FFFD; empty output is marked.
func resultText(text string) string {
	clean := strings.ReplaceAll(text, "\x00", "\uFFFD")
	if clean == "" {
		return "(no output)"
	}
	return clean
}

// refused: a 4xx other than 408/429 — the token or request will not be accepted again.
func refused(err error) bool {
	apiErr, ok := mango.AsError(err)
	return ok && apiErr.Status >= 400 && apiErr.Status < 500 && apiErr.Status != 408 && apiErr.Status != 429
}
