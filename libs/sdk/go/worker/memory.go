package worker

// Memory on the worker: the Go port of libs/worker-runtime/src/memory (the Docker supervisor's item
// runner) and of the pure reconcile rules of libs/domain/memory (memory-reconcile.ts, memory-path.ts).
// Seed 002, Environment Work: the frozen Session lists its Memory Store attachments; before the tools
// are built, the worker downloads each Store to its absolute /mnt/memory/<name> root and hands those
// roots (read_write or read_only) to the tool factory; writable Stores then reconcile by path.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"mango.dev/sdk/generated"
	"mango.dev/sdk/mango"
)

const (
	// DefaultMemoryRoot is where attached Memory Stores are mounted: /mnt/memory/<name>, the path the
	// Session's resources name (mount_path) and the model is told about.
	DefaultMemoryRoot = "/mnt/memory"
	// DefaultMemorySyncInterval is the cadence of full passes (docs/api-guide.md, Memory on the worker).
	DefaultMemorySyncInterval = 15 * time.Second
	// MemoryAttempts is how many times a Store's first download is tried before a temporary failure is
	// given up (as Skill staging: seed 002's "retries five times, then leaves the lease to expire").
	MemoryAttempts = 5
	// MemoryMarkerFile is written at the root of every mounted Store and never synchronized.
	MemoryMarkerFile = ".mango-memory-store"
	// DefaultMemoryContentBytes is the largest local file pushed; larger files are skipped with a warning.
	DefaultMemoryContentBytes = 102_400

	memoryTmpPrefix       = ".mango-sync-"
	memoryPathMaxBytes    = 1024
	memoryPathMaxSegments = 20
)

var memoryStoreIDPattern = regexp.MustCompile(`^memstore_[0-9A-HJKMNP-TV-Z]{26}$`)

// memoryMarkerContent is the marker's exact content for a Store: a tampered or foreign marker refuses
// every upload, deletion and download for it.
func memoryMarkerContent(memoryStoreID string) string { return "version 1\n" + memoryStoreID + "\n" }

// MemoryAttachment is one memory_store resource of a frozen Session (GET /v1/sessions/{id}, resources[]).
type MemoryAttachment struct {
	MemoryStoreID string `json:"memory_store_id"`
	// Access is read_write or read_only (only read_only Stores are mounted read-only).
	Access string `json:"access"`
	// MountPath is /mnt/memory/<slug>: the Store is mounted at <root>/<its last segment>.
	MountPath string `json:"mount_path"`
	Name      string `json:"name"`
}

// ToolRoot is a directory the Session's tools may use besides the Workdir: a mounted Memory Store.
type ToolRoot struct {
	// Path is absolute: <MemoryRoot>/<mount name>.
	Path string
	// ReadOnly marks a read_only attachment: file tools should refuse write and edit there (its local
	// changes are never uploaded).
	ReadOnly bool
	// MemoryStoreID is the Store mounted there.
	MemoryStoreID string
}

// MemoryInputError is a permanent problem of the Session's Memory input: an attachment that cannot be
// mounted (no Store id, an unusable or duplicate mount name). The worker reports it with Work Fail (the
// Session terminates). A Store that no longer exists is not an error: it is not mounted (Start).
type MemoryInputError struct{ Message string }

func (e *MemoryInputError) Error() string { return e.Message }

// MemoryMountError is a failure to mount a Store that may pass: the download still failing temporarily
// (no response, 408, 429, 5xx) after MemoryAttempts attempts, a refused Work token (401, 403), an existing
// mount root or a local file-system error. The worker neither Fails nor Stops: the lease expires and
// queue reclaim retries the activation.
type MemoryMountError struct{ Message string }

func (e *MemoryMountError) Error() string { return e.Message }

// MemorySyncReport is what one pass did.
type MemorySyncReport struct {
	Pulled, Pushed, Deleted, RemovedLocally int
	// Refused lists the Stores skipped because their marker (or root) was missing or altered.
	Refused []string
}

// MemorySyncOptions tunes a MemorySync (nil: the defaults).
type MemorySyncOptions struct {
	// Root is where Stores are mounted (empty: DefaultMemoryRoot).
	Root string
	// Interval is the cadence of full passes (0: DefaultMemorySyncInterval; negative: no timer — SyncIfDue
	// then never finds a pass due, SyncOnce, FinalSync and Flush still work).
	Interval time.Duration
	// NoTimer runs no cadence timer: passes run only through SyncIfDue (still due every Interval),
	// SyncOnce, FinalSync and Flush.
	NoTimer bool
	// MaxContentBytes bounds a pushed file (0: DefaultMemoryContentBytes).
	MaxContentBytes int64
	// Attempts at a Store's first download (0: MemoryAttempts).
	Attempts int
	// BackoffBase is the base delay of the mount retries' jittered backoff (0: 250 ms; capped at 8 s).
	BackoffBase time.Duration
	// OnWarning sees what the TypeScript runner logs as warnings (a refused push, an altered marker, a
	// skipped file, a failed pass that the next one retries).
	OnWarning func(error)
}

type memoryBaseline struct{ id, sha string }

type localMemory struct{ sha, content string }

// localFiles are a Store's local files in walk order (sorted by name, depth first).
type localFiles struct {
	order []string
	files map[string]localMemory
}

func (l *localFiles) set(p string, f localMemory) {
	if _, ok := l.files[p]; !ok {
		l.order = append(l.order, p)
	}
	l.files[p] = f
}

func (l *localFiles) remove(p string) {
	if _, ok := l.files[p]; ok {
		delete(l.files, p)
		l.order = slices.DeleteFunc(l.order, func(q string) bool { return q == p })
	}
}

func (l *localFiles) shas() map[string]string {
	out := make(map[string]string, len(l.files))
	for p, f := range l.files {
		out[p] = f.sha
	}
	return out
}

type mountedStore struct {
	id       string
	dir      string
	readOnly bool
	baseline map[string]memoryBaseline
	// missing counts, per synchronized path, the passes in a row that found its file gone.
	missing map[string]int
	// created: Start made (or emptied) this root, so Dispose may remove it. A root Start refused is
	// never removed.
	created bool
}

// MemorySync mounts a Session's Memory Stores and reconciles them by path (docs/api-guide.md, Memory on
// the worker; the port of the TypeScript runner's MemorySync):
//   - Start locks Root (flock: one MemorySync per Root at a time, across processes), creates each Store's
//     root <Root>/<mount name>, writes its marker and downloads every Memory; it returns the roots for
//     the tool factory. An existing root that is a leftover Mango mount (a marker, or empty) is the mount
//     of an activation that ended without teardown (the lock proves it is not in use): it is removed
//     with a warning, its unsynchronized changes lost (remote wins). Any other existing root is refused
//     and left untouched.
//   - Remote wins: a Memory changed or deleted remotely replaces or removes the local file, even if it was
//     edited locally (that edit is discarded and reported as a warning).
//   - Local changes go up through create, or update with a content_sha256 precondition on the last
//     synchronized digest (a concurrent remote change makes it 409, and the next full pass pulls).
//   - A local deletion is pushed (with expected_content_sha256) only when a second pass finds the file
//     still missing.
//   - A missing or altered marker, or a root that is no longer a plain directory, refuses every upload,
//     deletion and download for that Store. read_only Stores are only ever pulled.
//
// A full pass runs every Interval and through SyncIfDue after tool calls. FinalSync (clean end) is one
// bounded full pass; Flush (every end) one bounded push-only pass that never pulls or deletes. Passes
// never overlap. Neither touches the Work lease: the caller keeps renewing it through teardown, and the
// server fences each write with the live lease.
type MemorySync struct {
	client          *mango.Client
	root            string
	rootLock        *os.File
	stores          []*mountedStore
	interval        time.Duration
	noTimer         bool
	maxContentBytes int64
	attempts        int
	backoffBase     time.Duration
	onWarning       func(error)

	pass       chan struct{} // a one-slot semaphore: passes never overlap
	mu         sync.Mutex
	lastPassAt time.Time
	disposed   bool
	stopTimer  context.CancelFunc
	timerDone  chan struct{}
}

// NewMemorySync prepares the mounts of attachments with client (the Work token; give it
// mango.WithMaxRetries(0): a failed call is retried by the next pass, the first download by Start). An
// attachment that cannot be mounted is a *MemoryInputError.
func NewMemorySync(client *mango.Client, attachments []MemoryAttachment, opts *MemorySyncOptions) (*MemorySync, error) {
	var o MemorySyncOptions
	if opts != nil {
		o = *opts
	}
	if o.Root == "" {
		o.Root = DefaultMemoryRoot
	}
	if o.Interval == 0 {
		o.Interval = DefaultMemorySyncInterval
	}
	if o.MaxContentBytes <= 0 {
		o.MaxContentBytes = DefaultMemoryContentBytes
	}
	if o.Attempts <= 0 {
		o.Attempts = MemoryAttempts
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = 250 * time.Millisecond
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return nil, err
	}
	m := &MemorySync{client: client, root: root, interval: o.Interval, noTimer: o.NoTimer, maxContentBytes: o.MaxContentBytes, attempts: o.Attempts,
		backoffBase: o.BackoffBase, onWarning: o.OnWarning, pass: make(chan struct{}, 1)}
	used := map[string]bool{}
	for _, a := range attachments {
		if !memoryStoreIDPattern.MatchString(a.MemoryStoreID) {
			return nil, &MemoryInputError{fmt.Sprintf("%s is not a memory store id", clip(a.MemoryStoreID))}
		}
		name := a.Name
		if a.MountPath != "" {
			name = path.Base(a.MountPath)
		} else if name == "" {
			name = a.MemoryStoreID
		}
		if name == "" || name == "." || name == ".." || name == "/" || strings.ContainsAny(name, "/\x00") || used[name] {
			return nil, &MemoryInputError{fmt.Sprintf("memory store %s has an unusable mount name", a.MemoryStoreID)}
		}
		used[name] = true
		m.stores = append(m.stores, &mountedStore{id: a.MemoryStoreID, dir: filepath.Join(root, name), readOnly: a.Access == "read_only",
			baseline: map[string]memoryBaseline{}, missing: map[string]int{}})
	}
	return m, nil
}

// SessionMemoryAttachments are the memory_store resources of a Session as the Work token reads it
// (GET /v1/sessions/{id}); other resources are ignored.
func SessionMemoryAttachments(session []byte) ([]MemoryAttachment, error) {
	var s struct {
		Resources []struct {
			Type string `json:"type"`
			MemoryAttachment
		} `json:"resources"`
	}
	if err := json.Unmarshal(session, &s); err != nil {
		return nil, fmt.Errorf("worker: the Session is not readable: %w", err)
	}
	var out []MemoryAttachment
	for _, r := range s.Resources {
		if r.Type == "memory_store" {
			out = append(out, r.MemoryAttachment)
		}
	}
	return out, nil
}

// Roots are the mounted roots, for the tool factory (read_only Stores as read-only roots).
func (m *MemorySync) Roots() []ToolRoot {
	out := make([]ToolRoot, len(m.stores))
	for i, s := range m.stores {
		out[i] = ToolRoot{Path: s.dir, ReadOnly: s.readOnly, MemoryStoreID: s.id}
	}
	return out
}

// Start mounts every Store, then starts the cadence timer (stopped by Dispose or when ctx ends). A
// temporary failure of a Store's download (no response, 408, 429, 5xx, a Memory deleted between the
// listing and its read) is retried — Attempts in all, jittered backoff — each time on a root emptied again,
// so a Memory deleted remotely between two attempts is not left behind to be pushed back. A Store that no
// longer exists (deleted after the Session attached it: its listing answers 404) is not mounted: the
// Session goes on without it and a warning is reported (OnWarning). Anything else, or the last attempt's
// failure, is a *MemoryMountError. A cancelled ctx returns its error. On failure the caller should Dispose.
func (m *MemorySync) Start(ctx context.Context) ([]ToolRoot, error) {
	gone := map[*mountedStore]bool{}
	if len(m.stores) > 0 {
		if err := m.lockRoot(); err != nil {
			return nil, err
		}
	}
	for _, s := range m.stores {
		if err := m.createRoot(s); err != nil {
			return nil, err
		}
		for attempt := 1; ; attempt++ {
			err := m.download(ctx, s)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var vanished *memoryVanished
			if errors.Is(err, mango.ErrNotFound) && !errors.As(err, &vanished) {
				m.warn(fmt.Errorf("memory store %s no longer exists: not mounted", s.id))
				if err := os.RemoveAll(s.dir); err != nil {
					return nil, &MemoryMountError{fmt.Sprintf("removing the mount root of memory store %s: %v", s.id, err)}
				}
				gone[s] = true
				break
			}
			retry := transient(err) || errors.As(err, &vanished)
			if !retry || attempt >= m.attempts {
				after := ""
				if attempt > 1 {
					after = fmt.Sprintf(" (after %d attempts)", attempt)
				}
				return nil, &MemoryMountError{fmt.Sprintf("downloading memory store %s failed: %v%s", s.id, err, after)}
			}
			m.warn(fmt.Errorf("memory store %s: download attempt %d failed, retrying: %w", s.id, attempt, err))
			if err := sleepCtx(ctx, skillBackoff(attempt-1, m.backoffBase)); err != nil {
				return nil, err
			}
			if err := os.RemoveAll(s.dir); err != nil {
				return nil, &MemoryMountError{fmt.Sprintf("emptying the mount root of memory store %s: %v", s.id, err)}
			}
			if err := os.Mkdir(s.dir, 0o700); err != nil {
				return nil, &MemoryMountError{fmt.Sprintf("cannot create the mount root of memory store %s: %v", s.id, err)}
			}
			clear(s.baseline)
		}
	}
	m.mu.Lock()
	if len(gone) > 0 {
		kept := m.stores[:0]
		for _, s := range m.stores {
			if !gone[s] {
				kept = append(kept, s)
			}
		}
		m.stores = kept
	}
	m.lastPassAt = time.Now()
	if m.interval > 0 && !m.noTimer && !m.disposed {
		timerCtx, stop := context.WithCancel(ctx)
		m.stopTimer, m.timerDone = stop, make(chan struct{})
		go m.tick(timerCtx, m.timerDone)
	}
	m.mu.Unlock()
	return m.Roots(), nil
}

// lockRoot takes the exclusive lock on Root (created when missing) that Dispose releases: a second
// MemorySync on the same Root, in this process or another, is refused while this one is live, and the
// lock dies with its process — so an existing mount found under the lock is a leftover, never a live one.
func (m *MemorySync) lockRoot() error {
	if err := os.MkdirAll(m.root, 0o755); err != nil {
		return &MemoryMountError{fmt.Sprintf("cannot create the memory root %s: %v", m.root, err)}
	}
	f, err := lockDir(m.root)
	if errors.Is(err, errLockHeld) {
		return &MemoryMountError{fmt.Sprintf("the memory root %s is in use by another worker (one item at a time per MemoryRoot)", m.root)}
	}
	if err != nil {
		return &MemoryMountError{fmt.Sprintf("cannot lock the memory root %s: %v", m.root, err)}
	}
	m.rootLock = f
	return nil
}

// createRoot makes a Store's empty root. An existing one is removed only when it is a leftover Mango
// mount (see leftoverMount) and Root is locked; anything else is refused and left as it is.
func (m *MemorySync) createRoot(s *mountedStore) error {
	err := os.Mkdir(s.dir, 0o700)
	if errors.Is(err, fs.ErrExist) {
		if m.rootLock == nil || !leftoverMount(s.dir) {
			return &MemoryMountError{fmt.Sprintf("the mount root of memory store %s already exists (%s) and is not a leftover Mango mount: it is left untouched", s.id, s.dir)}
		}
		m.warn(fmt.Errorf("memory store %s: removing the leftover mount %s of an activation that ended without teardown (changes it had not synchronized are lost)", s.id, s.dir))
		if err := os.RemoveAll(s.dir); err != nil {
			return &MemoryMountError{fmt.Sprintf("removing the leftover mount of memory store %s: %v", s.id, err)}
		}
		err = os.Mkdir(s.dir, 0o700)
	}
	if err != nil {
		return &MemoryMountError{fmt.Sprintf("cannot create the mount root of memory store %s: %v", s.id, err)}
	}
	s.created = true
	return nil
}

var memoryMarkerPattern = regexp.MustCompile(`^version 1\nmemstore_[0-9A-HJKMNP-TV-Z]{26}\n$`)

// leftoverMount reports whether dir is what a MemorySync leaves when its process dies mid-item: a plain
// directory (not a symlink) that is empty (created, marker not yet written) or holds a regular marker
// file in the marker's exact format.
func leftoverMount(dir string) bool {
	info, err := os.Lstat(dir)
	if err != nil || !info.IsDir() {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	if len(entries) == 0 {
		return true
	}
	marker := filepath.Join(dir, MemoryMarkerFile)
	if info, err := os.Lstat(marker); err != nil || !info.Mode().IsRegular() || info.Size() > 128 {
		return false
	}
	b, err := os.ReadFile(marker)
	return err == nil && memoryMarkerPattern.Match(b)
}

// memoryVanished is a Memory listed but gone (404) before it was read: the download starts over.
type memoryVanished struct{ err error }

func (e *memoryVanished) Error() string { return "a listed memory vanished: " + e.err.Error() }
func (e *memoryVanished) Unwrap() error { return e.err }

// download is one attempt at a Store's first download: its marker, then every Memory (full view, pages
// of 20), each recorded as the baseline.
func (m *MemorySync) download(ctx context.Context, s *mountedStore) error {
	if err := os.WriteFile(filepath.Join(s.dir, MemoryMarkerFile), []byte(memoryMarkerContent(s.id)), 0o400); err != nil {
		return err
	}
	remote, err := m.listRemote(ctx, s, generated.MemoryStoresMemoriesListParamsViewFull)
	if err != nil {
		return err
	}
	for _, r := range remote {
		content := r.Content
		if content == nil {
			full, err := m.get(ctx, s, r.ID)
			if err != nil {
				if errors.Is(err, mango.ErrNotFound) {
					return &memoryVanished{err}
				}
				return err
			}
			content = full.Content
		}
		if err := m.writeLocal(s, r.Path, deref(content)); err != nil {
			return err
		}
		s.baseline[r.Path] = memoryBaseline{id: r.ID, sha: r.ContentSHA256}
	}
	return nil
}

func (m *MemorySync) tick(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(m.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := m.SyncIfDue(ctx); err != nil && ctx.Err() == nil {
				m.warn(fmt.Errorf("memory sync failed: %w", err))
			}
		}
	}
}

// SyncIfDue runs a full pass if the last one started at least Interval ago (call it after each tool
// call); nil when none was due.
func (m *MemorySync) SyncIfDue(ctx context.Context) (*MemorySyncReport, error) {
	m.mu.Lock()
	due := !m.disposed && m.interval > 0 && time.Since(m.lastPassAt) >= m.interval
	m.mu.Unlock()
	if !due {
		return nil, nil
	}
	r, err := m.SyncOnce(ctx)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// SyncOnce runs one full pass now (after any pass in progress).
func (m *MemorySync) SyncOnce(ctx context.Context) (MemorySyncReport, error) {
	return m.run(ctx, true)
}

// FinalSync is the clean end's one full pass, bounded by bound (waiting for a pass in progress counts).
func (m *MemorySync) FinalSync(ctx context.Context, bound time.Duration) (MemorySyncReport, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	return m.run(ctx, true)
}

// Flush is the push-only pass every end gets: local creates and updates only (no pull, no deletion),
// bounded by bound (waiting for a pass in progress counts).
func (m *MemorySync) Flush(ctx context.Context, bound time.Duration) (MemorySyncReport, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	return m.run(ctx, false)
}

// StopTimer stops the cadence timer (a timer pass in progress is cancelled); passes can still be run.
func (m *MemorySync) StopTimer() {
	m.mu.Lock()
	stop, done := m.stopTimer, m.timerDone
	m.stopTimer, m.timerDone = nil, nil
	m.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// Dispose stops the timer, waits for a pass in progress and, with removeDirs, removes the roots Start
// created (never following a symlink, never a root it refused); then it releases Root's lock.
func (m *MemorySync) Dispose(removeDirs bool) error {
	m.mu.Lock()
	m.disposed = true
	m.mu.Unlock()
	m.StopTimer()
	m.pass <- struct{}{}
	defer func() { <-m.pass }()
	var errs []error
	if removeDirs {
		for _, s := range m.stores {
			if !s.created {
				continue // refused by Start: not ours to remove
			}
			if err := os.RemoveAll(s.dir); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if m.rootLock != nil {
		errs = append(errs, m.rootLock.Close())
		m.rootLock = nil
	}
	return errors.Join(errs...)
}

func (m *MemorySync) run(ctx context.Context, full bool) (MemorySyncReport, error) {
	select {
	case m.pass <- struct{}{}:
	case <-ctx.Done():
		return MemorySyncReport{}, fmt.Errorf("memory sync: %w", ctx.Err())
	}
	defer func() { <-m.pass }()
	r, err := m.syncPass(ctx, full)
	if err != nil {
		return r, fmt.Errorf("memory sync: %w", err)
	}
	return r, nil
}

func (m *MemorySync) warn(err error) {
	if m.onWarning != nil {
		m.onWarning(err)
	}
}

// syncPass is one pass over every Store: full (pull, push, deletions) or push-only.
func (m *MemorySync) syncPass(ctx context.Context, full bool) (MemorySyncReport, error) {
	m.mu.Lock()
	m.lastPassAt = time.Now()
	m.mu.Unlock()
	report := MemorySyncReport{Refused: []string{}}
	for _, s := range m.stores {
		if err := ctx.Err(); err != nil {
			return report, err
		}
		if s.readOnly && !full {
			continue
		}
		if !markerIntact(s) {
			m.warn(fmt.Errorf("memory store %s: its marker is missing or altered: not synchronizing it", s.id))
			report.Refused = append(report.Refused, s.id)
			continue
		}
		local, err := m.scanLocal(s)
		if err == nil && full {
			err = m.pull(ctx, s, local, &report)
		}
		if err == nil && !s.readOnly {
			err = m.push(ctx, s, local, full, &report)
		}
		if err != nil {
			if ctx.Err() != nil {
				return report, ctx.Err()
			}
			m.warn(fmt.Errorf("memory store %s: sync pass failed, retrying next pass: %w", s.id, err))
		}
	}
	return report, nil
}

// pull runs planPull: remote wins (downloads, adoptions and local removals).
func (m *MemorySync) pull(ctx context.Context, s *mountedStore, local *localFiles, report *MemorySyncReport) error {
	remote, err := m.listRemote(ctx, s, generated.MemoryStoresMemoriesListParamsViewBasic)
	if err != nil {
		return err
	}
	states := make([]remoteMemoryState, len(remote))
	for i, r := range remote {
		states[i] = remoteMemoryState{id: r.ID, path: r.Path, sha: r.ContentSHA256}
	}
	for _, step := range planPull(s.baseline, states, local.shas()) {
		switch step.kind {
		case stepAdopt:
			s.baseline[step.path] = memoryBaseline{id: step.id, sha: step.sha}
		case stepDownload:
			if step.conflict {
				m.warn(fmt.Errorf("memory store %s: %s changed remotely and locally: remote wins", s.id, step.path))
			}
			full, err := m.get(ctx, s, step.id)
			if err != nil {
				return err
			}
			content := deref(full.Content)
			if err := m.writeLocal(s, step.path, content); err != nil {
				// e.g. a tool replaced a directory with a symlink out of the root: skip it, retry next pass.
				m.warn(fmt.Errorf("memory store %s: %s not written locally: %w", s.id, step.path, err))
				continue
			}
			s.baseline[step.path] = memoryBaseline{id: full.ID, sha: full.ContentSHA256}
			local.set(step.path, localMemory{sha: full.ContentSHA256, content: content})
			delete(s.missing, step.path)
			report.Pulled++
		case stepRemove:
			if step.conflict {
				m.warn(fmt.Errorf("memory store %s: %s deleted remotely and changed locally: remote wins", s.id, step.path))
			}
			if err := m.removeLocal(s, step.path); err != nil {
				m.warn(fmt.Errorf("memory store %s: %s not removed locally: %w", s.id, step.path, err))
			}
			local.remove(step.path)
			report.RemovedLocally++
			delete(s.baseline, step.path)
			delete(s.missing, step.path)
		case stepForget:
			delete(s.baseline, step.path)
			delete(s.missing, step.path)
		}
	}
	return nil
}

// push sends local creates and updates with preconditions (planPush) and, in a full pass, deletions
// seen by a second pass (planDeletions). An API refusal is reported and skipped (409: changed or taken
// remotely, the next full pass pulls; 404: gone remotely); no response ends the Store's pass.
func (m *MemorySync) push(ctx context.Context, s *mountedStore, local *localFiles, deletions bool, report *MemorySyncReport) error {
	for _, p := range local.order {
		delete(s.missing, p)
	}
	for _, step := range planPush(s.baseline, local.order, local.shas()) {
		l := local.files[step.path]
		var res *remoteMemory
		var err error
		if step.kind == stepUpdate {
			precondition := &struct {
				ContentSha256 string `json:"content_sha256"`
				Type          string `json:"type"`
			}{ContentSha256: step.expectedSHA, Type: "content_sha256"}
			res, err = mango.Decode[remoteMemory](m.client.MemoryStoresMemoriesUpdate(ctx, s.id, step.id, nil,
				generated.MemoryStoresMemoriesUpdateJSONRequestBody{Content: &l.content, Precondition: precondition}))
		} else {
			res, err = mango.Decode[remoteMemory](m.client.MemoryStoresMemoriesCreate(ctx, s.id, nil,
				generated.MemoryStoresMemoriesCreateJSONRequestBody{Path: step.path, Content: l.content}))
		}
		if err == nil && res == nil {
			err = errors.New("an empty response")
		}
		if err != nil {
			apiErr, ok := mango.AsError(err)
			if !ok {
				return err
			}
			if apiErr.Status == 404 && step.kind == stepUpdate {
				delete(s.baseline, step.path)
			}
			m.warn(fmt.Errorf("memory store %s: push of %s refused: %w", s.id, step.path, err))
			continue
		}
		s.baseline[step.path] = memoryBaseline{id: res.ID, sha: res.ContentSHA256}
		report.Pushed++
	}
	if !deletions {
		return nil
	}
	for _, step := range planDeletions(s.baseline, local.shas(), s.missing) {
		s.missing[step.path] = step.seen
		if step.kind == stepWait {
			continue
		}
		sha := step.expectedSHA
		err := mango.Check(m.client.MemoryStoresMemoriesDelete(ctx, s.id, step.id,
			&generated.MemoryStoresMemoriesDeleteParams{ExpectedContentSha256: &sha}))
		if err != nil {
			apiErr, ok := mango.AsError(err)
			if !ok {
				return err
			}
			if apiErr.Status == 404 {
				delete(s.baseline, step.path)
				delete(s.missing, step.path)
			}
			m.warn(fmt.Errorf("memory store %s: delete of %s refused: %w", s.id, step.path, err))
			continue
		}
		report.Deleted++
		delete(s.baseline, step.path)
		delete(s.missing, step.path)
	}
	return nil
}

// remoteMemory is a Memory as the API shows it (content null in the basic view).
type remoteMemory struct {
	Type          string  `json:"type"`
	ID            string  `json:"id"`
	Path          string  `json:"path"`
	ContentSHA256 string  `json:"content_sha256"`
	Content       *string `json:"content"`
}

func (m *MemorySync) get(ctx context.Context, s *mountedStore, id string) (*remoteMemory, error) {
	view := generated.MemoryStoresMemoriesRetrieveParamsViewFull
	res, err := mango.Decode[remoteMemory](m.client.MemoryStoresMemoriesRetrieve(ctx, s.id, id,
		&generated.MemoryStoresMemoriesRetrieveParams{View: &view}))
	if err == nil && res == nil {
		err = errors.New("memory: an empty response")
	}
	return res, err
}

// listRemote lists every Memory of the Store (prefixes skipped), in listing order.
func (m *MemorySync) listRemote(ctx context.Context, s *mountedStore, view generated.MemoryStoresMemoriesListParamsView) ([]remoteMemory, error) {
	limit := 100
	if view == generated.MemoryStoresMemoriesListParamsViewFull {
		limit = 20
	}
	var out []remoteMemory
	seen := map[string]int{}
	var page *string
	for {
		res, err := mango.Decode[struct {
			Data     []remoteMemory `json:"data"`
			NextPage *string        `json:"next_page"`
		}](m.client.MemoryStoresMemoriesList(ctx, s.id, &generated.MemoryStoresMemoriesListParams{View: &view, Limit: &limit, Page: page}))
		if err != nil {
			return nil, err
		}
		if res == nil {
			return nil, errors.New("memory: an empty listing")
		}
		for _, r := range res.Data {
			if r.Type == "memory_prefix" {
				continue
			}
			if i, ok := seen[r.Path]; ok {
				out[i] = r
				continue
			}
			seen[r.Path] = len(out)
			out = append(out, r)
		}
		if res.NextPage == nil || *res.NextPage == "" {
			return out, nil
		}
		page = res.NextPage
	}
}

// ── Files ───────────────────────────────────────────────────────────────────────────────────────────

func markerIntact(s *mountedStore) bool {
	root, err := os.Lstat(s.dir)
	if err != nil || !root.IsDir() {
		return false // a symlink is not a directory to Lstat
	}
	marker := filepath.Join(s.dir, MemoryMarkerFile)
	info, err := os.Lstat(marker)
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	b, err := os.ReadFile(marker)
	return err == nil && string(b) == memoryMarkerContent(s.id)
}

// scanLocal reads the regular files below the root (symlinks and special files ignored) whose relative
// path is a valid, normalized Memory path, no larger than MaxContentBytes and UTF-8 text.
func (m *MemorySync) scanLocal(s *mountedStore) (*localFiles, error) {
	out := &localFiles{files: map[string]localMemory{}}
	var walk func(dir string) error
	walk = func(dir string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			full := filepath.Join(dir, e.Name())
			if e.IsDir() {
				if err := walk(full); err != nil {
					return err
				}
				continue
			}
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), memoryTmpPrefix) || (dir == s.dir && e.Name() == MemoryMarkerFile) {
				continue
			}
			rel, err := filepath.Rel(s.dir, full)
			if err != nil {
				return err
			}
			p := "/" + filepath.ToSlash(rel)
			if normalized, err := NormalizeMemoryPath(p); err != nil || normalized != p {
				m.warn(fmt.Errorf("memory store %s: %s is not a valid memory path: not synchronized", s.id, clip(p)))
				continue
			}
			info, err := os.Lstat(full)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // removed meanwhile
				}
				return err
			}
			if !info.Mode().IsRegular() {
				continue
			}
			if info.Size() > m.maxContentBytes {
				m.warn(fmt.Errorf("memory store %s: %s has %d bytes, more than a memory may: not synchronized", s.id, p, info.Size()))
				continue
			}
			b, err := os.ReadFile(full)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return err
			}
			if !utf8.Valid(b) {
				m.warn(fmt.Errorf("memory store %s: %s is not UTF-8 text: not synchronized", s.id, p))
				continue
			}
			sum := sha256.Sum256(b)
			out.set(p, localMemory{sha: hex.EncodeToString(sum[:]), content: string(b)})
		}
		return nil
	}
	return out, walk(s.dir)
}

func (s *mountedStore) localPath(p string) string {
	return filepath.Join(append([]string{s.dir}, strings.Split(p[1:], "/")...)...)
}

// insideRoot resolves dir (its deepest existing ancestor when it does not exist) and reports whether it
// stays inside the Store's real root, so a directory a tool replaced with a symlink is never followed
// out of it.
func (s *mountedStore) insideRoot(dir string) (bool, error) {
	root, err := filepath.EvalSymlinks(s.dir)
	if err != nil {
		return false, err
	}
	existing := dir
	for {
		resolved, err := filepath.EvalSymlinks(existing)
		if err == nil {
			existing = resolved
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return false, err
		}
		existing = parent
	}
	return existing == root || strings.HasPrefix(existing, root+string(filepath.Separator)), nil
}

// writeLocal writes a pulled Memory atomically (a temporary file renamed over the target, which replaces
// a symlink rather than following it). It refuses when the parent directory resolves outside the root.
func (m *MemorySync) writeLocal(s *mountedStore, p, content string) error {
	if p == "/"+MemoryMarkerFile {
		m.warn(fmt.Errorf("memory store %s: a memory at the marker path is not written", s.id))
		return nil
	}
	if _, err := NormalizeMemoryPath(p); err != nil {
		return err
	}
	target := s.localPath(p)
	leaves := fmt.Errorf("refusing to write %s: its directory leaves the memory root", p)
	if ok, err := s.insideRoot(filepath.Dir(target)); err != nil || !ok {
		return leaves
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return err
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(target))
	if err != nil {
		return err
	}
	if ok, err := s.insideRoot(parent); err != nil || !ok {
		return leaves
	}
	tmp, err := os.CreateTemp(parent, memoryTmpPrefix+"*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(content)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(parent, filepath.Base(target))); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}

// removeLocal removes a Memory's local file, never through a directory that leaves the root.
func (m *MemorySync) removeLocal(s *mountedStore, p string) error {
	target := s.localPath(p)
	if ok, err := s.insideRoot(filepath.Dir(target)); err != nil || !ok {
		return fmt.Errorf("refusing to remove %s: its directory leaves the memory root", p)
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// NormalizeMemoryPath validates and normalizes a Memory path as the API does (libs/domain/memory
// memory-path.ts): NFC, starts with "/", 1–20 segments, no empty, "." or ".." segment (so no traversal
// and no trailing slash), no control or format characters and no line or paragraph separator, at most
// 1024 bytes of UTF-8. Case is kept.
func NormalizeMemoryPath(raw string) (string, error) {
	if !utf8.ValidString(raw) {
		return "", errors.New("path must be valid UTF-8")
	}
	p := norm.NFC.String(raw)
	if !strings.HasPrefix(p, "/") {
		return "", errors.New(`path must start with "/"`)
	}
	for _, r := range p {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return "", errors.New("path must not contain control or format characters")
		}
	}
	if len(p) > memoryPathMaxBytes {
		return "", fmt.Errorf("path must be at most %d bytes of UTF-8", memoryPathMaxBytes)
	}
	segments := strings.Split(p[1:], "/")
	if len(segments) > memoryPathMaxSegments {
		return "", fmt.Errorf("path must have at most %d segments", memoryPathMaxSegments)
	}
	for _, s := range segments {
		switch s {
		case "":
			return "", errors.New(`path must not contain empty segments (or end with "/")`)
		case ".", "..":
			return "", errors.New(`path must not contain "." or ".." segments`)
		}
	}
	return p, nil
}

// ── Reconcile rules (libs/domain/memory memory-reconcile.ts) ─────────────────────────────────────────

type stepKind string

const (
	stepAdopt    stepKind = "adopt"    // the local file already holds the remote content: record it
	stepDownload stepKind = "download" // remote is new or changed: download it over the local file
	stepRemove   stepKind = "remove"   // deleted remotely while the file exists locally: remove it
	stepForget   stepKind = "forget"   // deleted remotely and locally: forget the path
	stepCreate   stepKind = "create"
	stepUpdate   stepKind = "update" // expectedSHA: the content_sha256 precondition
	stepWait     stepKind = "wait"   // missing for the first time: remember it, push nothing yet
	stepDelete   stepKind = "delete" // missing on a second pass in a row: delete it remotely
)

type remoteMemoryState struct{ id, path, sha string }

type reconcileStep struct {
	kind        stepKind
	path, id    string
	sha         string // adopt: the remote digest
	conflict    bool   // download/remove: a local edit is lost
	expectedSHA string // update/delete: the precondition
	seen        int    // wait/delete: passes in a row that found the file missing
}

// sortedKeys keeps the plans deterministic (the TypeScript Maps iterate in insertion order).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// planPull is what a full pass pulls: remote paths first (listing order), then the remotely deleted ones.
// Remote wins: a remotely new or changed Memory replaces the local file even if it was edited locally.
func planPull(baseline map[string]memoryBaseline, remote []remoteMemoryState, local map[string]string) []reconcileStep {
	var steps []reconcileStep
	inRemote := map[string]bool{}
	for _, r := range remote {
		inRemote[r.path] = true
		base, hasBase := baseline[r.path]
		if hasBase && base.id == r.id && base.sha == r.sha {
			continue
		}
		l, hasLocal := local[r.path]
		if hasLocal && l == r.sha {
			steps = append(steps, reconcileStep{kind: stepAdopt, path: r.path, id: r.id, sha: r.sha})
			continue
		}
		steps = append(steps, reconcileStep{kind: stepDownload, path: r.path, id: r.id, conflict: hasLocal && (!hasBase || l != base.sha)})
	}
	for _, p := range sortedKeys(baseline) {
		if inRemote[p] {
			continue
		}
		if l, ok := local[p]; ok {
			steps = append(steps, reconcileStep{kind: stepRemove, path: p, conflict: l != baseline[p].sha})
		} else {
			steps = append(steps, reconcileStep{kind: stepForget, path: p})
		}
	}
	return steps
}

// planPush lists the local files that are new or changed since the baseline, in local order; an update
// carries the baseline digest as its precondition.
func planPush(baseline map[string]memoryBaseline, order []string, local map[string]string) []reconcileStep {
	var steps []reconcileStep
	for _, p := range order {
		sha, ok := local[p]
		if !ok {
			continue
		}
		base, hasBase := baseline[p]
		switch {
		case !hasBase:
			steps = append(steps, reconcileStep{kind: stepCreate, path: p})
		case base.sha != sha:
			steps = append(steps, reconcileStep{kind: stepUpdate, path: p, id: base.id, expectedSHA: base.sha})
		}
	}
	return steps
}

// planDeletions covers the synchronized paths whose local file is gone; missing counts earlier passes
// that saw it gone. Only a second observation in a row deletes, with the baseline digest as precondition.
func planDeletions(baseline map[string]memoryBaseline, local map[string]string, missing map[string]int) []reconcileStep {
	var steps []reconcileStep
	for _, p := range sortedKeys(baseline) {
		if _, ok := local[p]; ok {
			continue
		}
		seen := missing[p] + 1
		if seen < 2 {
			steps = append(steps, reconcileStep{kind: stepWait, path: p, seen: seen})
		} else {
			base := baseline[p]
			steps = append(steps, reconcileStep{kind: stepDelete, path: p, id: base.id, expectedSHA: base.sha, seen: seen})
		}
	}
	return steps
}
