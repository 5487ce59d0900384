package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"mango.dev/sdk/generated"
	"mango.dev/sdk/mango"
)

// HealthcheckTimeout bounds the provider's Healthcheck callback.
const HealthcheckTimeout = 10 * time.Second

// ErrLeaseLost is the cause of an item context cancelled because its lease is gone (a 412 on heartbeat,
// or the Work token refused after a reclaim or expiry).
var ErrLeaseLost = errors.New("worker: lease lost")

// ErrStopRequested is the cause of an item context cancelled because the Work is stopping (graceful Stop).
var ErrStopRequested = errors.New("worker: stop requested")

// EnvironmentWorker composes WorkPoller and SessionToolRunner. It performs the first heartbeat before
// anything runs, renews the lease conditionally (echoing the previous last_heartbeat exactly), cancels
// the item when the lease is lost or a Stop is requested, and force-Stops Session Work when its runner
// ends. Before a Session's tools are built, it reads the frozen Session with the Work token, stages its
// Skills below Workdir (see Workdir) and mounts its Memory Stores below MemoryRoot (see MemoryRoot). A
// healthcheck calls the provider's Healthcheck with a 10 s context and submits the result; a missing
// callback reports failure.
type EnvironmentWorker struct {
	// Client authenticates with the Environment key (Poll and Ack). Work tokens come from each item's secret.
	Client        *mango.Client
	EnvironmentID string
	WorkerID      string
	// Healthcheck is the provider-owned probe of the execution path (nil: the check fails).
	Healthcheck func(ctx context.Context) error
	// Tools run Session tool calls (SessionToolRunner), unless NewTools is set.
	Tools []Tool
	// NewTools, when set, is the tool factory: it builds each Session item's tools once its Skills are
	// staged and its Memory Stores mounted, receiving the exact mounted roots with their access
	// (ToolRoot.ReadOnly for read_only attachments: file tools should refuse write and edit there). Its
	// tools replace Tools for that item; those implementing io.Closer are closed when the runner ends,
	// before Memory's final sync. An error ends the item without Fail or Stop (the lease expires).
	NewTools func(ctx context.Context, setup ToolSetup) ([]Tool, error)
	// CustomTools answer the Agent's custom tool calls this operator serves (SessionToolRunner.CustomTools).
	CustomTools []Tool
	// Workdir is the canonical working directory of the Tools: the directory that model-visible paths
	// starting with skills/ are relative to (created when missing). For each Session item, before the
	// tool runner starts, the frozen primary Agent Skill pins are staged below <Workdir>/skills/<name>/
	// and roster Agents' pins below <Workdir>/skills/.agents/<agent_id>/<name>/ (StageSkills: one fresh
	// tree that atomically replaces the prior one, archives verified against their frozen length and
	// SHA-256, Session-wide limits); the tree is removed when the item ends. A Session without pins
	// only removes a leftover tree. A permanent validation failure (*SkillStagingError) calls Work Fail
	// (the Session terminates); a temporary one (*SkillRetrievalError, after SkillAttempts attempts)
	// returns without Fail or Stop, so the lease expires and the Work is reclaimed. Empty: a Session
	// that pins Skills is not run (an error without Fail: a worker misconfiguration must not terminate
	// the user's Session).
	Workdir string
	// MemoryRoot is where a Session's attached Memory Stores are mounted (empty: DefaultMemoryRoot,
	// /mnt/memory, the path the Session's mount_path and the model's system prompt name). For each
	// Session item, after its Skills and before its tools are built, every attached Store is downloaded
	// to <MemoryRoot>/<last segment of its mount_path> with a marker file (MemorySync.Start: MemoryRoot is
	// flock-ed for the item, so a second item on it is refused; a leftover mount of a worker that died
	// mid-item is removed and mounted afresh; any other existing root is refused and left untouched).
	// Writable Stores then reconcile by path every MemorySyncInterval and after tool calls (remote wins;
	// local changes through create/update with SHA-256 preconditions; deletions on a second
	// observation); a clean end (idle,
	// terminated, deleted, drained) gets one final full sync bounded by MemoryFinalSyncTimeout, and every
	// end where the lease is still ours a push-only flush bounded by MemoryFlushTimeout; then the roots
	// are removed. A permanent failure (*MemoryInputError: an unusable attachment, a Store that no longer
	// exists) calls Work Fail; a temporary one (*MemoryMountError, after MemoryAttempts attempts) returns
	// without Fail or Stop, so the lease expires and the Work is reclaimed.
	MemoryRoot string
	// MemorySyncInterval is the cadence of full Memory passes (0: DefaultMemorySyncInterval, 15 s;
	// negative: no timer and no pass after tool calls — only the final sync and the flush).
	MemorySyncInterval time.Duration
	// LeaseTTL is desired_ttl_seconds (1–300; 0: 60 s). The lease is renewed every third of it.
	LeaseTTL time.Duration
	// MaxIdle is passed to SessionToolRunner.
	MaxIdle time.Duration
	// Block and ReclaimOlderThan configure the WorkPoller.
	Block, ReclaimOlderThan time.Duration
	// OnError sees non-fatal errors.
	OnError func(error)
}

// Run polls and handles items one at a time until ctx is done, drain is closed (the running item
// finishes first) or polling fails fatally.
func (w *EnvironmentWorker) Run(ctx context.Context, drain <-chan struct{}) error {
	p := &WorkPoller{
		Client: w.Client, EnvironmentID: w.EnvironmentID, WorkerID: w.WorkerID,
		Block: w.Block, ReclaimOlderThan: w.ReclaimOlderThan, OnError: w.OnError,
	}
	return p.Run(ctx, drain, func(ctx context.Context, item *Item) {
		if err := w.HandleItem(ctx, *item, drain); err != nil {
			w.report(fmt.Errorf("work %s: %w", item.WorkID, err))
		}
	})
}

// ItemFromEnv is the narrow identity of an already-acknowledged item from MANGO_WORK_ID,
// MANGO_ENVIRONMENT_ID, MANGO_WORK_TYPE and MANGO_SESSION_ID (Session Work only). The Work secret is
// not an environment value: pass it from the launcher's protected transport (e.g. stdin).
func ItemFromEnv(secret string) (Item, error) {
	item := Item{
		WorkID:        os.Getenv("MANGO_WORK_ID"),
		EnvironmentID: os.Getenv("MANGO_ENVIRONMENT_ID"),
		Type:          os.Getenv("MANGO_WORK_TYPE"),
		SessionID:     os.Getenv("MANGO_SESSION_ID"),
		Secret:        secret,
	}
	switch {
	case item.WorkID == "" || item.EnvironmentID == "":
		return Item{}, errors.New("worker: MANGO_WORK_ID and MANGO_ENVIRONMENT_ID are required")
	case item.Type != TypeHealthcheck && item.Type != TypeSession:
		return Item{}, fmt.Errorf("%w %q (MANGO_WORK_TYPE)", ErrUnknownWorkType, item.Type)
	case item.Type == TypeSession && item.SessionID == "":
		return Item{}, errors.New("worker: MANGO_SESSION_ID is required for session Work")
	case item.Type == TypeHealthcheck && item.SessionID != "":
		return Item{}, errors.New("worker: MANGO_SESSION_ID is only for session Work")
	case secret == "":
		return Item{}, errors.New("worker: the Work secret is required")
	}
	return item, nil
}

// HandleItem runs one acknowledged item with the Work token from its secret. drain (may be nil) lets a
// Session's running tool calls finish before the final Stop.
func (w *EnvironmentWorker) HandleItem(ctx context.Context, item Item, drain <-chan struct{}) error {
	secret, err := mango.DecodeWorkSecret(item.Secret)
	if err != nil {
		return err
	}
	token, err := w.Client.WithToken(secret.SessionsToken, secret.APIBaseURL)
	if err != nil {
		return err
	}
	lease := &leaseKeeper{client: token, environmentID: item.EnvironmentID, workID: item.WorkID, ttl: w.LeaseTTL}
	if err := lease.first(ctx); err != nil {
		return fmt.Errorf("first heartbeat: %w", err)
	}
	itemCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	keeperDone := lease.start(itemCtx, cancel)
	defer func() { cancel(nil); <-keeperDone }()

	switch item.Type {
	case TypeHealthcheck:
		return w.healthcheck(itemCtx, token, item)
	case TypeSession:
		reason, err := w.runSession(itemCtx, token, secret, item, drain)
		if err != nil {
			return err
		}
		if errors.Is(context.Cause(itemCtx), ErrLeaseLost) || reason == StopRefused {
			return ErrLeaseLost // fenced: the token is no longer ours, do not Stop
		}
		// Final forced Stop: the item's work is over (idle, terminated, deleted, drained or stop requested).
		stopCtx, stopCancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer stopCancel()
		force := true
		err = token.Environments.Work.Stop(stopCtx, item.EnvironmentID, item.WorkID, generated.EnvironmentsWorkStopJSONRequestBody{Force: &force})
		if err != nil && !errors.Is(err, mango.ErrAuthentication) {
			return fmt.Errorf("final stop: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("%w %q", ErrUnknownWorkType, item.Type)
	}
}

// ToolSetup is what the tool factory (EnvironmentWorker.NewTools) gets for one Session item.
type ToolSetup struct {
	SessionID string
	// Workdir is EnvironmentWorker.Workdir (the Skills are staged below it).
	Workdir string
	// Roots are the mounted Memory Stores, in attachment order.
	Roots []ToolRoot
}

// Teardown bounds of Memory (as the TypeScript item runner's): the clean end's final full sync and the
// push-only flush every end gets, each separately.
const (
	MemoryFinalSyncTimeout = 30 * time.Second
	MemoryFlushTimeout     = 30 * time.Second
)

// runSession prepares the Session's inputs (Skills, then Memory), builds its tools, runs its tool calls
// and tears down: the tools close, Memory gets its final sync (clean end) and flush (every end whose
// lease is still ours), the mounts and the staged tree are removed.
func (w *EnvironmentWorker) runSession(ctx context.Context, token *mango.Client, secret mango.WorkSecret, item Item, drain <-chan struct{}) (string, error) {
	prepared := func(err error) (string, error) {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, ErrStopRequested):
			return StopCancelled, nil // stopping: the final Stop follows
		case errors.Is(cause, ErrLeaseLost):
			return "", cause
		}
		return "", err
	}
	// Staging and mounting retry themselves (SkillAttempts, MemoryAttempts): their client does not, and
	// bounds each metadata request.
	client, err := w.Client.WithToken(secret.SessionsToken, secret.APIBaseURL, mango.WithMaxRetries(0), mango.WithTimeout(15*time.Second))
	if err != nil {
		return "", err
	}
	session, err := w.readSession(ctx, client, item)
	if err != nil {
		return prepared(err)
	}
	var memory *MemorySync
	if session != nil { // nil: terminated, nothing will run (the runner sees the end)
		dispose, err := w.stageSessionSkills(ctx, client, token, item, session)
		if err != nil {
			return prepared(err)
		}
		defer dispose()
		if memory, err = w.mountSessionMemory(ctx, token, secret, item, session); err != nil {
			return prepared(err)
		}
	}
	tools, closeTools, err := w.sessionTools(ctx, item, memory)
	if err != nil {
		if memory != nil {
			_ = memory.Dispose(true)
		}
		return "", err
	}
	runner := &SessionToolRunner{Client: token, SessionID: item.SessionID, Tools: tools, CustomTools: w.CustomTools, MaxIdle: w.MaxIdle, OnError: w.OnError}
	if memory != nil && w.MemorySyncInterval >= 0 {
		runner.AfterCall = func(ctx context.Context) {
			if _, err := memory.SyncIfDue(ctx); err != nil && ctx.Err() == nil {
				w.report(err)
			}
		}
	}
	reason, err := runner.Run(ctx, drain)
	closeTools()
	if memory != nil {
		lost := errors.Is(context.Cause(ctx), ErrLeaseLost) || reason == StopRefused
		clean := err == nil && !lost && ctx.Err() == nil
		w.tearDownMemory(ctx, memory, clean, lost)
	}
	return reason, err
}

// readSession reads the frozen Session with the Work token (transient failures retried, SkillAttempts in
// all); nil when it is terminated.
func (w *EnvironmentWorker) readSession(ctx context.Context, client *mango.Client, item Item) ([]byte, error) {
	var raw *json.RawMessage
	var err error
	for attempt := 1; ; attempt++ {
		raw, err = mango.Decode[json.RawMessage](client.SessionsRetrieve(ctx, item.SessionID))
		if err == nil && raw == nil {
			err = errors.New("an empty response")
		}
		if err == nil {
			break
		}
		if !transient(err) || attempt >= SkillAttempts || sleepCtx(ctx, skillBackoff(attempt-1, skillRetryBase)) != nil {
			return nil, fmt.Errorf("reading the Session: %w", err) // not an input error: no Fail
		}
	}
	var head struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(*raw, &head)
	if head.Status == "terminated" {
		return nil, nil
	}
	return *raw, nil
}

// sessionTools are the item's tools: NewTools' (with a closer for those that are io.Closers), or Tools.
func (w *EnvironmentWorker) sessionTools(ctx context.Context, item Item, memory *MemorySync) ([]Tool, func(), error) {
	noop := func() {}
	if w.NewTools == nil {
		return w.Tools, noop, nil
	}
	setup := ToolSetup{SessionID: item.SessionID, Workdir: w.Workdir, Roots: []ToolRoot{}}
	if memory != nil {
		setup.Roots = memory.Roots()
	}
	tools, err := w.NewTools(ctx, setup)
	if err != nil {
		return nil, nil, fmt.Errorf("building the tools: %w", err) // the operator's factory: no Fail
	}
	return tools, func() {
		for _, t := range tools {
			if c, ok := t.(io.Closer); ok {
				if err := c.Close(); err != nil {
					w.report(fmt.Errorf("closing tool %s: %w", t.Name(), err))
				}
			}
		}
	}, nil
}

// memoryRetryBase is the base delay of the mount backoff; memoryNoTimer leaves only the passes after
// tool calls (variables for the tests).
var (
	memoryRetryBase = 250 * time.Millisecond
	memoryNoTimer   = false
)

// mountSessionMemory mounts the Session's attached Memory Stores below MemoryRoot (see
// EnvironmentWorker.MemoryRoot); nil when none is attached. A permanent failure is reported with Work
// Fail before it is returned.
func (w *EnvironmentWorker) mountSessionMemory(ctx context.Context, token *mango.Client, secret mango.WorkSecret, item Item, session []byte) (*MemorySync, error) {
	attachments, err := SessionMemoryAttachments(session)
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	if len(attachments) == 0 {
		return nil, nil
	}
	// Memory calls get their own client: a write may legitimately take longer than the 15 s bound of
	// other calls, within the teardown bounds.
	client, err := w.Client.WithToken(secret.SessionsToken, secret.APIBaseURL, mango.WithMaxRetries(0),
		mango.WithTimeout(MemoryFinalSyncTimeout+MemoryFlushTimeout))
	if err != nil {
		return nil, err
	}
	memory, err := NewMemorySync(client, attachments, &MemorySyncOptions{Root: w.MemoryRoot, Interval: w.MemorySyncInterval,
		NoTimer: memoryNoTimer, BackoffBase: memoryRetryBase, OnWarning: w.report})
	if err == nil {
		if _, err = memory.Start(ctx); err != nil {
			if derr := memory.Dispose(true); derr != nil {
				w.report(fmt.Errorf("memory: removing the mounts: %w", derr))
			}
		}
	}
	var permanent *MemoryInputError
	switch {
	case err == nil:
		return memory, nil
	case errors.As(err, &permanent) && ctx.Err() == nil:
		w.failWork(ctx, token, item, permanent.Message)
		return nil, fmt.Errorf("memory: %w", err)
	default:
		return nil, fmt.Errorf("memory: %w", err) // temporary (or cancelled): no Fail, no Stop
	}
}

// tearDownMemory ends the Memory mounts: a final full sync on a clean end, a push-only flush on every end
// whose lease is still ours (each separately bounded, neither cancelled by the item's end), then the
// roots are removed. The lease keeps renewing meanwhile (the item context of a clean end is live).
func (w *EnvironmentWorker) tearDownMemory(ctx context.Context, memory *MemorySync, clean, lost bool) {
	memory.StopTimer()
	teardown := context.WithoutCancel(ctx)
	if clean {
		if _, err := memory.FinalSync(teardown, MemoryFinalSyncTimeout); err != nil {
			w.report(fmt.Errorf("final memory sync: %w", err))
		}
	}
	if !lost {
		if _, err := memory.Flush(teardown, MemoryFlushTimeout); err != nil {
			w.report(fmt.Errorf("memory flush: %w", err))
		}
	}
	if err := memory.Dispose(true); err != nil {
		w.report(fmt.Errorf("memory: removing the mounts: %w", err))
	}
}

// skillRetryBase is the base delay of the staging backoff (a variable for the tests).
var skillRetryBase = 250 * time.Millisecond

// stageSessionSkills stages the frozen Session's Skill pins below Workdir (see
// EnvironmentWorker.Workdir); dispose removes the tree. A permanent failure is reported with Work Fail
// before it is returned.
func (w *EnvironmentWorker) stageSessionSkills(ctx context.Context, client, token *mango.Client, item Item, session []byte) (dispose func(), err error) {
	noop := func() {}
	pins, err := SessionSkillPins(session)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	if len(pins) == 0 {
		// No pins: no tree (and none left over from an earlier activation).
		if w.Workdir != "" {
			if err := RemoveStagedSkills(w.Workdir); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("skills: removing the leftover tree: %w", err)
			}
		}
		return noop, nil
	}
	if w.Workdir == "" {
		return nil, fmt.Errorf("worker: Session %s pins %d Skill versions but EnvironmentWorker.Workdir is not set", item.SessionID, len(pins))
	}
	if err := os.MkdirAll(w.Workdir, 0o755); err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	_, _, err = StageSkills(ctx, client, w.Workdir, pins, &StageSkillsOptions{BackoffBase: skillRetryBase})
	var permanent *SkillStagingError
	switch {
	case err == nil:
		workdir := w.Workdir
		return func() {
			if err := RemoveStagedSkills(workdir); err != nil {
				w.report(fmt.Errorf("skills: removing the staged tree: %w", err))
			}
		}, nil
	case errors.As(err, &permanent) && ctx.Err() == nil:
		w.failWork(ctx, token, item, permanent.Message)
		return nil, fmt.Errorf("skills: %w", err)
	default:
		return nil, fmt.Errorf("skills: %w", err) // temporary (or cancelled): no Fail, no Stop
	}
}

// failWork is Work Fail for a permanent input error (the Session and its Threads terminate); the item
// then ends without a Stop.
func (w *EnvironmentWorker) failWork(ctx context.Context, token *mango.Client, item Item, message string) {
	failCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if _, err := token.Environments.Work.Fail(failCtx, item.EnvironmentID, item.WorkID,
		generated.EnvironmentsWorkFailJSONRequestBody{Message: truncate(message, 1024)}); err != nil {
		w.report(fmt.Errorf("work %s: Fail was refused: %w", item.WorkID, err))
	}
}

func (w *EnvironmentWorker) healthcheck(ctx context.Context, token *mango.Client, item Item) error {
	status, message := generated.WorkResultRequestStatusSucceeded, "healthcheck passed"
	if w.Healthcheck == nil {
		status, message = generated.WorkResultRequestStatusFailed, "no Healthcheck callback is configured"
	} else {
		hctx, cancel := context.WithTimeout(ctx, HealthcheckTimeout)
		err := w.Healthcheck(hctx)
		cancel()
		if err != nil {
			status, message = generated.WorkResultRequestStatusFailed, truncate(err.Error(), 1000)
		}
	}
	if cause := context.Cause(ctx); cause != nil {
		return cause // lease lost or stopping: no result from a fenced worker
	}
	// Result completes the check and stops the Work (no final Stop: the token now allows only a retry).
	_, err := token.Environments.Work.Result(ctx, item.EnvironmentID, item.WorkID,
		generated.EnvironmentsWorkResultJSONRequestBody{Status: status, Message: message})
	return err
}

func (w *EnvironmentWorker) report(err error) {
	if w.OnError != nil {
		w.OnError(err)
	}
}

// truncate cuts s to at most n bytes, at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// leaseKeeper renews one Work lease conditionally.
type leaseKeeper struct {
	client        *mango.Client
	environmentID string
	workID        string
	ttl           time.Duration

	mu   sync.Mutex
	last string // the exact last_heartbeat string of the previous response
}

// NoHeartbeat is expected_last_heartbeat for the first heartbeat of a lease.
const NoHeartbeat = "NO_HEARTBEAT"

func (l *leaseKeeper) ttlSeconds() int {
	if l.ttl <= 0 {
		return 60
	}
	return int(min(max(l.ttl/time.Second, 1), 300))
}

// beat sends one heartbeat; it returns ErrStopRequested (wrapped) when the Work is stopping.
func (l *leaseKeeper) beat(ctx context.Context) error {
	l.mu.Lock()
	expected := l.last
	l.mu.Unlock()
	if expected == "" {
		expected = NoHeartbeat
	}
	ttl := l.ttlSeconds()
	res, err := l.client.EnvironmentsWorkHeartbeat(ctx, l.environmentID, l.workID,
		&generated.EnvironmentsWorkHeartbeatParams{ExpectedLastHeartbeat: expected, DesiredTtlSeconds: &ttl})
	raw, err := mango.Decode[json.RawMessage](res, err)
	if err != nil {
		return err
	}
	// Decode as strings: the next heartbeat must echo last_heartbeat byte for byte.
	var hb struct {
		LastHeartbeat string `json:"last_heartbeat"`
		State         string `json:"state"`
	}
	if err := json.Unmarshal(*raw, &hb); err != nil || hb.LastHeartbeat == "" {
		return fmt.Errorf("worker: heartbeat response without last_heartbeat")
	}
	l.mu.Lock()
	l.last = hb.LastHeartbeat
	l.mu.Unlock()
	if hb.State == string(generated.WorkHeartbeatStateStopping) {
		return ErrStopRequested
	}
	return nil
}

// FirstBeatRetry bounds how long a first heartbeat that fails transiently (no response, 408, 429, 5xx —
// e.g. while the API's database restarts) is retried before the item is left to be reclaimed: half of
// the 60 s starting lease that Ack grants. A retry is safe: the heartbeat is conditional, so one after
// an attempt the server did take is answered 412.
const FirstBeatRetry = 30 * time.Second

// first sends the lease's first heartbeat, retrying transient failures for up to FirstBeatRetry.
func (l *leaseKeeper) first(ctx context.Context) error {
	deadline := time.Now().Add(FirstBeatRetry)
	for attempt := 0; ; attempt++ {
		err := l.beat(ctx)
		if err == nil || !transient(err) || ctx.Err() != nil {
			return err
		}
		wait := backoff(attempt)
		if time.Now().Add(wait).After(deadline) || sleepCtx(ctx, wait) != nil {
			return err
		}
	}
}

// transient reports a failure that may pass: no response, or a 408, 429 or 5xx answer.
func transient(err error) bool {
	var conn *mango.ConnectionError
	var apiErr *mango.Error
	return errors.As(err, &conn) || (errors.As(err, &apiErr) && mango.IsRetryableStatus(apiErr.Status))
}

// start renews every ttl/3 until ctx is done; lease loss or a stop request cancels the item.
func (l *leaseKeeper) start(ctx context.Context, cancel context.CancelCauseFunc) <-chan struct{} {
	done := make(chan struct{})
	interval := time.Duration(l.ttlSeconds()) * time.Second / 3
	go func() {
		defer close(done)
		for {
			if sleepCtx(ctx, interval) != nil {
				return
			}
			for attempt := 0; ; attempt++ {
				err := l.beat(ctx)
				if err == nil {
					break
				}
				if ctx.Err() != nil {
					return
				}
				switch {
				case errors.Is(err, ErrStopRequested):
					cancel(ErrStopRequested)
					return
				case errors.Is(err, mango.ErrPreconditionFailed), errors.Is(err, mango.ErrAuthentication), errors.Is(err, mango.ErrNotFound):
					cancel(fmt.Errorf("%w: %v", ErrLeaseLost, err))
					return
				}
				if attempt >= 4 {
					cancel(fmt.Errorf("%w: renewal kept failing: %v", ErrLeaseLost, err))
					return
				}
				if sleepCtx(ctx, backoff(attempt)) != nil {
					return
				}
			}
		}
	}()
	return done
}
