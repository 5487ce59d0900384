// Package worker holds seed 002's provider-neutral worker helpers for a self-hosted Environment:
//
//   - WorkPoller: Poll (with reclaim), dispatch of both Work data variants, Ack, drain.
//   - SessionToolRunner: one Session's tool calls — history recovery, the event stream with Last-Event-ID,
//     confirmation gates, local dispatch and result submission.
//   - EnvironmentWorker: both composed with the conditional heartbeat, lease-loss cancellation, the
//     Healthcheck callback (10 s context), staging of the Session's frozen Skills below Workdir
//     (StageSkills) and the mount of its Memory Stores below MemoryRoot (MemorySync: synced by path, a
//     final sync and a flush at the end) before its tools are built (NewTools gets the mounted roots),
//     and the final forced Stop. Run owns Poll through Stop in one trusted process; HandleItem runs one
//     already-acknowledged item (see ItemFromEnv).
//
// The helpers do not choose or create a sandbox: the launcher that calls them owns that boundary.
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"mango.dev/sdk/generated"
	"mango.dev/sdk/mango"
)

// Work types (the data variants of a Work item).
const (
	TypeHealthcheck = "healthcheck"
	TypeSession     = "session"
)

// ErrUnknownWorkType is returned (wrapped) for a polled item whose data variant this SDK does not know.
// The item is not acknowledged; the queue hands the claim to another poller after reclaim_older_than_ms.
var ErrUnknownWorkType = errors.New("worker: unknown work data type")

// Item is one acknowledged Work item.
type Item struct {
	WorkID        string
	EnvironmentID string
	// Type is TypeHealthcheck or TypeSession.
	Type string
	// SessionID is set for Session Work only.
	SessionID string
	// Secret is the polled Work secret, kept in memory only (Get, List and Ack redact it).
	Secret string
	// Work is the item as Ack returned it (state starting), when it came from a WorkPoller.
	Work *generated.RedactedWork
}

// WorkPoller claims Work for one Environment with an Environment key.
type WorkPoller struct {
	// Client authenticates with the Environment key (Poll and Ack only).
	Client        *mango.Client
	EnvironmentID string
	// WorkerID identifies this poller to the queue (worker_id).
	WorkerID string
	// Block is how long one Poll waits for an item (block_ms). Default 10 s.
	Block time.Duration
	// ReclaimOlderThan lets Poll reclaim items polled but not acknowledged for this long (0: the server's default).
	ReclaimOlderThan time.Duration
	// OnError sees every non-fatal error (failed Poll, rejected item, failed Ack).
	OnError func(error)
	// Sleep waits between failed polls (tests replace it). Default: a context-aware sleep.
	Sleep func(context.Context, time.Duration) error
}

// Next polls until it has acknowledged an item, ctx is done, or drain is closed. After drain it never
// acknowledges another item (a claim polled meanwhile is left to be reclaimed) and returns (nil, nil).
// Authentication, permission, 400 and 404 errors end polling; other failures back off and retry.
func (p *WorkPoller) Next(ctx context.Context, drain <-chan struct{}) (*Item, error) {
	failures := 0
	for {
		if drained(drain) {
			return nil, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		polled, err := p.poll(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if fatal(err) {
				return nil, err
			}
			p.report(err)
			if serr := p.sleep(ctx, backoff(failures)); serr != nil {
				return nil, serr
			}
			failures++
			continue
		}
		failures = 0
		if polled == nil {
			continue
		}
		if drained(drain) {
			return nil, nil // drain: never Ack what will not run
		}
		item, err := dispatch(polled, p.EnvironmentID)
		if err != nil {
			p.report(err)
			continue
		}
		acked, err := p.Client.Environments.Work.Ack(ctx, p.EnvironmentID, item.WorkID)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if fatal(err) && !errors.Is(err, mango.ErrNotFound) {
				return nil, err
			}
			p.report(fmt.Errorf("ack %s: %w", item.WorkID, err))
			continue
		}
		item.Work = acked
		return item, nil
	}
}

// Run hands every acknowledged item to handle, one at a time, until ctx is done (returns ctx.Err()),
// drain is closed (returns nil once the running item finished) or polling fails fatally.
func (p *WorkPoller) Run(ctx context.Context, drain <-chan struct{}, handle func(context.Context, *Item)) error {
	for {
		item, err := p.Next(ctx, drain)
		if err != nil || item == nil {
			return err
		}
		handle(ctx, item)
	}
}

func (p *WorkPoller) poll(ctx context.Context) (*generated.PolledWork, error) {
	block := p.Block
	if block <= 0 {
		block = 10 * time.Second
	}
	params := &generated.EnvironmentsWorkPollParams{BlockMs: ptr(int(block / time.Millisecond))}
	if p.WorkerID != "" {
		params.WorkerId = ptr(p.WorkerID)
	}
	if p.ReclaimOlderThan > 0 {
		params.ReclaimOlderThanMs = ptr(int(p.ReclaimOlderThan / time.Millisecond))
	}
	// The raw call keeps the body: an empty queue is {} and the item carries its secret.
	res, err := p.Client.EnvironmentsWorkPoll(ctx, p.EnvironmentID, params)
	raw, err := mango.Decode[json.RawMessage](res, err)
	if err != nil {
		return nil, err
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(*raw, &probe); err != nil {
		return nil, fmt.Errorf("worker: poll response is not an object: %w", err)
	}
	if len(probe) == 0 {
		return nil, nil
	}
	var polled generated.PolledWork
	if err := json.Unmarshal(*raw, &polled); err != nil {
		return nil, fmt.Errorf("worker: poll response: %w", err)
	}
	return &polled, nil
}

// dispatch reads the data variant of a polled item; unknown variants are rejected.
func dispatch(polled *generated.PolledWork, environmentID string) (*Item, error) {
	item := &Item{WorkID: polled.Id, EnvironmentID: environmentID, Secret: polled.Secret}
	kind, err := polled.Data.Discriminator()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnknownWorkType, polled.Id, err)
	}
	switch kind {
	case TypeHealthcheck:
		item.Type = TypeHealthcheck
	case TypeSession:
		data, err := polled.Data.AsSessionWorkData()
		if err != nil || data.Id == "" {
			return nil, fmt.Errorf("%w: %s: session data without an id", ErrUnknownWorkType, polled.Id)
		}
		item.Type, item.SessionID = TypeSession, data.Id
	default:
		return nil, fmt.Errorf("%w %q (%s)", ErrUnknownWorkType, kind, polled.Id)
	}
	if polled.Secret == "" {
		return nil, fmt.Errorf("worker: polled %s without a secret", polled.Id)
	}
	return item, nil
}

func (p *WorkPoller) report(err error) {
	if p.OnError != nil {
		p.OnError(err)
	}
}

func (p *WorkPoller) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	return sleepCtx(ctx, d)
}

// fatal: a credential or request the server will refuse again (401, 403, 404, 400).
func fatal(err error) bool {
	return errors.Is(err, mango.ErrAuthentication) || errors.Is(err, mango.ErrPermissionDenied) ||
		errors.Is(err, mango.ErrNotFound) || errors.Is(err, mango.ErrBadRequest)
}

func drained(drain <-chan struct{}) bool {
	if drain == nil {
		return false
	}
	select {
	case <-drain:
		return true
	default:
		return false
	}
}

// backoff: 500 ms doubling to at most 10 s.
func backoff(attempt int) time.Duration {
	d := 500 * time.Millisecond << min(attempt, 5)
	return min(d, 10*time.Second)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func ptr[T any](v T) *T { return &v }
