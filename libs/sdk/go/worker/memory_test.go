package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	storeA = "memstore_01JD2Y3QX9V5M8K7R6T4W2P0AA"
	storeB = "memstore_01JD2Y3QX9V5M8K7R6T4W2P0BB"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// fakeMemory serves the Memory routes the worker uses (openapi.yaml, Memory Stores) over a real HTTP
// server: list (basic/full views, pages), retrieve, create (409 on a taken path), update with a
// content_sha256 precondition (409 when stale), delete with expected_content_sha256; read_only stores
// answer writes 403, unknown stores 404.
type fakeMemory struct {
	mu     sync.Mutex
	stores map[string]map[string]*fakeMem // store → path → memory
	// readOnly stores refuse writes (403), as a Work token's read_only attachment.
	readOnly map[string]bool
	next     int
	// requests records "METHOD path?query body" of every Memory request.
	requests []string
	// before, when set, may answer a request itself with a status (0: serve it).
	before func(r *http.Request, n int) int
	mux    *http.ServeMux
}

type fakeMem struct{ id, path, content string }

func newFakeMemory() *fakeMemory {
	f := &fakeMemory{stores: map[string]map[string]*fakeMem{}, readOnly: map[string]bool{}, mux: http.NewServeMux()}
	f.mux.HandleFunc("GET /v1/memory_stores/{store}/memories", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		store, ok := f.stores[r.PathValue("store")]
		if !ok {
			writeErr(w, 404)
			return
		}
		q := r.URL.Query()
		limit, _ := strconv.Atoi(q.Get("limit"))
		offset, _ := strconv.Atoi(q.Get("page"))
		paths := slices.Sorted(maps.Keys(store))
		data := []any{}
		end := min(offset+limit, len(paths))
		for _, p := range paths[offset:end] {
			data = append(data, store[p].json(q.Get("view") == "full"))
		}
		var next any
		if end < len(paths) {
			next = strconv.Itoa(end)
		}
		b, _ := json.Marshal(map[string]any{"data": data, "next_page": next})
		writeJSON(w, 200, string(b))
	})
	f.mux.HandleFunc("GET /v1/memory_stores/{store}/memories/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if m := f.byID(r.PathValue("store"), r.PathValue("id")); m != nil {
			b, _ := json.Marshal(m.json(r.URL.Query().Get("view") == "full"))
			writeJSON(w, 200, string(b))
			return
		}
		writeErr(w, 404)
	})
	f.mux.HandleFunc("POST /v1/memory_stores/{store}/memories", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Path, Content string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		defer f.mu.Unlock()
		store, code := f.writable(r.PathValue("store"))
		if code != 0 {
			writeErr(w, code)
			return
		}
		if store[body.Path] != nil {
			writeErr(w, 409)
			return
		}
		f.next++
		m := &fakeMem{id: fmt.Sprintf("mem_%04d", f.next), path: body.Path, content: body.Content}
		store[body.Path] = m
		b, _ := json.Marshal(m.json(true))
		writeJSON(w, 201, string(b))
	})
	f.mux.HandleFunc("POST /v1/memory_stores/{store}/memories/{id}", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Content      *string
			Precondition *struct {
				Type          string `json:"type"`
				ContentSHA256 string `json:"content_sha256"`
			}
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, code := f.writable(r.PathValue("store")); code != 0 {
			writeErr(w, code)
			return
		}
		m := f.byID(r.PathValue("store"), r.PathValue("id"))
		switch {
		case m == nil:
			writeErr(w, 404)
		case body.Precondition != nil && body.Precondition.ContentSHA256 != sha(m.content):
			writeErr(w, 409)
		default:
			if body.Content != nil {
				m.content = *body.Content
			}
			b, _ := json.Marshal(m.json(true))
			writeJSON(w, 200, string(b))
		}
	})
	f.mux.HandleFunc("DELETE /v1/memory_stores/{store}/memories/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		store, code := f.writable(r.PathValue("store"))
		if code != 0 {
			writeErr(w, code)
			return
		}
		m := f.byID(r.PathValue("store"), r.PathValue("id"))
		switch expected := r.URL.Query().Get("expected_content_sha256"); {
		case m == nil:
			writeErr(w, 404)
		case expected != "" && expected != sha(m.content):
			writeErr(w, 409)
		default:
			delete(store, m.path)
			writeJSON(w, 200, fmt.Sprintf(`{"id":%q,"type":"memory_deleted"}`, m.id))
		}
	})
	return f
}

func (f *fakeMemory) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	f.mu.Lock()
	f.requests = append(f.requests, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(body)))
	n, before := len(f.requests), f.before
	f.mu.Unlock()
	if before != nil {
		if code := before(r, n); code != 0 {
			writeErr(w, code)
			return
		}
	}
	f.mux.ServeHTTP(w, r)
}

func (m *fakeMem) json(full bool) map[string]any {
	out := map[string]any{"type": "memory", "id": m.id, "path": m.path, "content_sha256": sha(m.content),
		"content_size_bytes": len(m.content), "content": nil}
	if full {
		out["content"] = m.content
	}
	return out
}

func (f *fakeMemory) byID(store, id string) *fakeMem {
	for _, m := range f.stores[store] {
		if m.id == id {
			return m
		}
	}
	return nil
}

func (f *fakeMemory) writable(id string) (map[string]*fakeMem, int) {
	store, ok := f.stores[id]
	switch {
	case !ok:
		return nil, 404
	case f.readOnly[id]:
		return nil, 403
	}
	return store, 0
}

// add creates a store (if needed) with memories, as a Workspace key would.
func (f *fakeMemory) add(store string, memories map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stores[store] == nil {
		f.stores[store] = map[string]*fakeMem{}
	}
	for _, p := range slices.Sorted(maps.Keys(memories)) {
		f.next++
		f.stores[store][p] = &fakeMem{id: fmt.Sprintf("mem_%04d", f.next), path: p, content: memories[p]}
	}
}

// edit changes (or, with content nil, deletes) a memory remotely.
func (f *fakeMemory) edit(store, path string, content *string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if content == nil {
		delete(f.stores[store], path)
	} else {
		f.stores[store][path].content = *content
	}
}

func (f *fakeMemory) contents(store string) map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for p, m := range f.stores[store] {
		out[p] = m.content
	}
	return out
}

func (f *fakeMemory) id(store, path string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stores[store][path].id
}

// sent are the recorded requests whose "METHOD path" starts with prefix.
func (f *fakeMemory) sent(prefix string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		if strings.HasPrefix(r, prefix) {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeMemory) writes() []string {
	return append(append(f.sent("POST "), f.sent("DELETE ")...), f.sent("PUT ")...)
}

func ptrTo(s string) *string { return &s }

// memorySetup mounts the store (read_write unless readOnly) with memories on a MemorySync with no timer.
type memorySetup struct {
	f     *fakeMango
	sync  *MemorySync
	roots []ToolRoot
	dir   string
	warns []error
	mu    sync.Mutex
}

func (s *memorySetup) file(p string) string { return filepath.Join(s.dir, filepath.FromSlash(p[1:])) }

func (s *memorySetup) read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(s.file(p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (s *memorySetup) write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(s.file(p)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.file(p), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (s *memorySetup) pass(t *testing.T) MemorySyncReport {
	t.Helper()
	r, err := s.sync.SyncOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mountStore(t *testing.T, memories map[string]string, readOnly bool) *memorySetup {
	t.Helper()
	f := newFake(t)
	f.memory.add(storeA, memories)
	access := "read_write"
	if readOnly {
		access = "read_only"
		f.memory.readOnly[storeA] = true
	}
	s := &memorySetup{f: f}
	m, err := NewMemorySync(f.workClient(t), []MemoryAttachment{{MemoryStoreID: storeA, Access: access, MountPath: "/mnt/memory/notes", Name: "Notes"}},
		&MemorySyncOptions{Root: t.TempDir(), Interval: -1, BackoffBase: time.Millisecond,
			OnWarning: func(err error) { s.mu.Lock(); s.warns = append(s.warns, err); s.mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if s.roots, err = m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.sync, s.dir = m, s.roots[0].Path
	t.Cleanup(func() { _ = m.Dispose(true) })
	return s
}

func wantReport(t *testing.T, got MemorySyncReport, pulled, pushed, deleted, removed int) {
	t.Helper()
	if got.Pulled != pulled || got.Pushed != pushed || got.Deleted != deleted || got.RemovedLocally != removed {
		t.Fatalf("report %+v, want pulled %d pushed %d deleted %d removed %d", got, pulled, pushed, deleted, removed)
	}
}

func wantRemote(t *testing.T, f *fakeMango, want map[string]string) {
	t.Helper()
	if got := f.memory.contents(storeA); !maps.Equal(got, want) {
		t.Fatalf("remote %v, want %v", got, want)
	}
}

func TestMemorySyncMountsEachStoreWithAMarkerAndRefusesASecondSyncOnItsRoot(t *testing.T) {
	f := newFake(t)
	many := map[string]string{"/a.md": "alpha", "/dir/b.md": "beta"}
	for i := range 21 {
		many[fmt.Sprintf("/p/%02d.md", i)] = fmt.Sprintf("note %d", i)
	}
	f.memory.add(storeA, many)
	f.memory.add(storeB, map[string]string{"/ref.md": "reference"})
	f.memory.readOnly[storeB] = true
	root := filepath.Join(t.TempDir(), "mnt", "memory")
	attachments := []MemoryAttachment{
		{MemoryStoreID: storeA, Access: "read_write", MountPath: "/mnt/memory/notes"},
		{MemoryStoreID: storeB, Access: "read_only", MountPath: "/mnt/memory/reference"},
	}
	m, err := NewMemorySync(f.workClient(t), attachments, &MemorySyncOptions{Root: root, Interval: -1})
	if err != nil {
		t.Fatal(err)
	}
	roots, err := m.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolRoot{{Path: filepath.Join(root, "notes"), MemoryStoreID: storeA}, {Path: filepath.Join(root, "reference"), ReadOnly: true, MemoryStoreID: storeB}}
	if !slices.Equal(roots, want) || !slices.Equal(m.Roots(), want) {
		t.Fatalf("roots %+v, want %+v", roots, want)
	}
	for p, content := range many {
		if b, err := os.ReadFile(filepath.Join(roots[0].Path, filepath.FromSlash(p[1:]))); err != nil || string(b) != content {
			t.Fatalf("%s: %q %v", p, b, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(roots[1].Path, "ref.md")); string(b) != "reference" {
		t.Fatalf("ref.md %q", b)
	}
	marker := filepath.Join(roots[0].Path, MemoryMarkerFile)
	if b, _ := os.ReadFile(marker); string(b) != "version 1\n"+storeA+"\n" {
		t.Fatalf("marker %q", b)
	}
	if info, _ := os.Stat(marker); info.Mode().Perm() != 0o400 {
		t.Fatalf("marker mode %v", info.Mode())
	}
	// The first download reads the full view in pages of 20 (23 memories: two pages), with the Work token.
	if pages := f.memory.sent("GET /v1/memory_stores/" + storeA + "/memories?"); len(pages) != 2 || !strings.Contains(pages[0], "view=full") || !strings.Contains(pages[0], "limit=20") {
		t.Fatalf("pages %v", pages)
	}
	if w := f.memory.writes(); len(w) != 0 {
		t.Fatalf("mounting wrote %v", w)
	}
	// A second MemorySync on the same Root is refused while this one is live (a temporary failure: the
	// lease is left to expire), and its Dispose removes nothing of the live mounts.
	again, _ := NewMemorySync(f.workClient(t), attachments[:1], &MemorySyncOptions{Root: root, Interval: -1})
	_, err = again.Start(context.Background())
	var mountErr *MemoryMountError
	if !errors.As(err, &mountErr) || !strings.Contains(err.Error(), "in use by another worker") {
		t.Fatalf("err = %v", err)
	}
	if err := again.Dispose(true); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(roots[1].Path, "ref.md")); string(b) != "reference" {
		t.Fatalf("the refused MemorySync removed a live mount: ref.md %q", b)
	}
	if err := m.Dispose(true); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

func TestNewMemorySyncRefusesUnusableAttachments(t *testing.T) {
	for _, a := range [][]MemoryAttachment{
		{{MemoryStoreID: "store_x", MountPath: "/mnt/memory/x"}},
		{{MemoryStoreID: storeA, MountPath: "/mnt/memory/.."}},
		{{MemoryStoreID: storeA, MountPath: "/mnt/memory/x"}, {MemoryStoreID: storeB, MountPath: "/mnt/memory/x"}},
	} {
		_, err := NewMemorySync(nil, a, nil)
		var input *MemoryInputError
		if !errors.As(err, &input) {
			t.Fatalf("%+v: err = %v", a, err)
		}
	}
	// Without a mount_path the name, then the id, names the root.
	m, err := NewMemorySync(nil, []MemoryAttachment{{MemoryStoreID: storeA, Name: "notes"}, {MemoryStoreID: storeB}}, &MemorySyncOptions{Root: "/r"})
	if err != nil || m.Roots()[0].Path != "/r/notes" || m.Roots()[1].Path != "/r/"+storeB {
		t.Fatalf("%v %+v", err, m.Roots())
	}
}

func TestMemorySyncPushesLocalChangesWithSHA256Preconditions(t *testing.T) {
	s := mountStore(t, map[string]string{"/a.md": "alpha"}, false)
	s.write(t, "/a.md", "alpha 2")
	s.write(t, "/dir/new.md", "fresh")
	wantReport(t, s.pass(t), 0, 2, 0, 0)
	wantRemote(t, s.f, map[string]string{"/a.md": "alpha 2", "/dir/new.md": "fresh"})
	update := s.f.memory.sent("POST /v1/memory_stores/" + storeA + "/memories/" + s.f.memory.id(storeA, "/a.md"))
	if len(update) != 1 || !strings.Contains(update[0], `"precondition":{"content_sha256":"`+sha("alpha")+`","type":"content_sha256"}`) ||
		!strings.Contains(update[0], `"content":"alpha 2"`) {
		t.Fatalf("update %v", update)
	}
	if create := s.f.memory.sent("POST /v1/memory_stores/" + storeA + "/memories "); len(create) != 1 || !strings.Contains(create[0], `"path":"/dir/new.md"`) {
		t.Fatalf("create %v", create)
	}
	// Nothing changed: nothing sent. The next edit's precondition is the pushed digest.
	before := len(s.f.memory.writes())
	wantReport(t, s.pass(t), 0, 0, 0, 0)
	if n := len(s.f.memory.writes()); n != before {
		t.Fatalf("%d writes after an unchanged pass", n-before)
	}
	s.write(t, "/a.md", "alpha 3")
	wantReport(t, s.pass(t), 0, 1, 0, 0)
	if last := s.f.memory.writes(); !strings.Contains(last[len(last)-1], sha("alpha 2")) {
		t.Fatalf("precondition of the second update: %s", last[len(last)-1])
	}
	// Every Memory request carried the Work token.
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	for i, l := range s.f.log {
		if strings.Contains(l, "/memory_stores/") && s.f.auth[i] != "Bearer mango_wt_token" {
			t.Fatalf("%s used %q", l, s.f.auth[i])
		}
	}
}

func TestMemorySyncRemoteWinsConflicts(t *testing.T) {
	s := mountStore(t, map[string]string{"/a.md": "base", "/b.md": "keep"}, false)
	s.f.memory.edit(storeA, "/a.md", ptrTo("remote edit"))
	s.write(t, "/a.md", "local edit")
	wantReport(t, s.pass(t), 1, 0, 0, 0)
	if got := s.read(t, "/a.md"); got != "remote edit" {
		t.Fatalf("a.md %q", got)
	}
	wantRemote(t, s.f, map[string]string{"/a.md": "remote edit", "/b.md": "keep"})
	// A remote delete also wins over a local edit.
	s.f.memory.edit(storeA, "/b.md", nil)
	s.write(t, "/b.md", "edited locally")
	wantReport(t, s.pass(t), 0, 0, 0, 1)
	if _, err := os.Stat(s.file("/b.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("b.md: %v", err)
	}
	wantRemote(t, s.f, map[string]string{"/a.md": "remote edit"})
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.warns) != 2 || !strings.Contains(fmt.Sprint(s.warns), "remote wins") {
		t.Fatalf("warnings %v", s.warns)
	}
}

func TestMemorySyncStalePreconditionIsRefusedAndTheNextPassPulls(t *testing.T) {
	s := mountStore(t, map[string]string{"/a.md": "one"}, false)
	s.write(t, "/a.md", "local two")
	s.f.memory.edit(storeA, "/a.md", ptrTo("remote two"))
	// The push-only flush cannot see the remote change: its update carries the old digest and is refused.
	r, err := s.sync.Flush(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantReport(t, r, 0, 0, 0, 0)
	wantRemote(t, s.f, map[string]string{"/a.md": "remote two"})
	wantReport(t, s.pass(t), 1, 0, 0, 0)
	if got := s.read(t, "/a.md"); got != "remote two" {
		t.Fatalf("a.md %q", got)
	}
}

func TestMemorySyncDeletionNeedsASecondObservation(t *testing.T) {
	s := mountStore(t, map[string]string{"/gone.md": "bye", "/stays.md": "hi"}, false)
	id := s.f.memory.id(storeA, "/gone.md")
	if err := os.Remove(s.file("/gone.md")); err != nil {
		t.Fatal(err)
	}
	wantReport(t, s.pass(t), 0, 0, 0, 0)
	wantRemote(t, s.f, map[string]string{"/gone.md": "bye", "/stays.md": "hi"})
	wantReport(t, s.pass(t), 0, 0, 1, 0)
	wantRemote(t, s.f, map[string]string{"/stays.md": "hi"})
	if del := s.f.memory.sent("DELETE "); len(del) != 1 || !strings.Contains(del[0], id+"?expected_content_sha256="+sha("bye")) {
		t.Fatalf("delete %v", del)
	}
	// A file that comes back between the two observations is not deleted.
	if err := os.Remove(s.file("/stays.md")); err != nil {
		t.Fatal(err)
	}
	s.pass(t)
	s.write(t, "/stays.md", "hi")
	s.pass(t)
	s.pass(t)
	wantRemote(t, s.f, map[string]string{"/stays.md": "hi"})
	if n := len(s.f.memory.sent("DELETE ")); n != 1 {
		t.Fatalf("%d deletes", n)
	}
}

func TestMemorySyncMarkerProtectsAnAlteredDirectory(t *testing.T) {
	t.Run("a tampered marker", func(t *testing.T) {
		s := mountStore(t, map[string]string{"/a.md": "alpha", "/b.md": "beta"}, false)
		marker := filepath.Join(s.dir, MemoryMarkerFile)
		_ = os.Remove(marker)
		if err := os.WriteFile(marker, []byte("version 1\nmemstore_someone_else\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s.write(t, "/a.md", "tampered")
		s.write(t, "/c.md", "new")
		_ = os.Remove(s.file("/b.md"))
		s.f.memory.edit(storeA, "/a.md", ptrTo("remote"))
		for range 3 {
			if r := s.pass(t); !slices.Equal(r.Refused, []string{storeA}) || r.Pushed+r.Deleted+r.Pulled+r.RemovedLocally != 0 {
				t.Fatalf("report %+v", r)
			}
		}
		if r, err := s.sync.Flush(context.Background(), 5*time.Second); err != nil || !slices.Equal(r.Refused, []string{storeA}) {
			t.Fatalf("flush %+v %v", r, err)
		}
		if r, err := s.sync.FinalSync(context.Background(), 5*time.Second); err != nil || !slices.Equal(r.Refused, []string{storeA}) {
			t.Fatalf("final %+v %v", r, err)
		}
		wantRemote(t, s.f, map[string]string{"/a.md": "remote", "/b.md": "beta"})
		if w := s.f.memory.writes(); len(w) != 0 {
			t.Fatalf("writes %v", w)
		}
		if got := s.read(t, "/a.md"); got != "tampered" {
			t.Fatalf("a pull reached the altered directory: %q", got)
		}
	})
	t.Run("a root replaced with a symlink", func(t *testing.T) {
		s := mountStore(t, map[string]string{"/a.md": "alpha"}, false)
		elsewhere := t.TempDir()
		if err := os.Rename(s.dir, filepath.Join(elsewhere, "moved")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(elsewhere, "moved"), s.dir); err != nil {
			t.Fatal(err)
		}
		s.write(t, "/x.md", "through the link")
		_ = os.Remove(s.file("/a.md"))
		s.pass(t)
		if r := s.pass(t); !slices.Equal(r.Refused, []string{storeA}) {
			t.Fatalf("report %+v", r)
		}
		wantRemote(t, s.f, map[string]string{"/a.md": "alpha"})
		if err := s.sync.Dispose(true); err != nil {
			t.Fatal(err)
		}
		// Dispose removed the link, not what it pointed to.
		if _, err := os.Stat(filepath.Join(elsewhere, "moved", "x.md")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestMemorySyncReadOnlyStoresAreOnlyPulled(t *testing.T) {
	s := mountStore(t, map[string]string{"/ref.md": "reference"}, true)
	if !s.roots[0].ReadOnly {
		t.Fatalf("roots %+v", s.roots)
	}
	s.write(t, "/ref.md", "scribbled")
	s.write(t, "/extra.md", "extra")
	s.pass(t)
	s.pass(t)
	if _, err := s.sync.Flush(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.sync.FinalSync(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if w := s.f.memory.writes(); len(w) != 0 {
		t.Fatalf("writes %v", w)
	}
	s.f.memory.edit(storeA, "/ref.md", ptrTo("reference v2"))
	wantReport(t, s.pass(t), 1, 0, 0, 0)
	if got := s.read(t, "/ref.md"); got != "reference v2" {
		t.Fatalf("ref.md %q", got)
	}
}

func TestMemorySyncFlushPushesOnlyAndFinalSyncIsFull(t *testing.T) {
	s := mountStore(t, map[string]string{"/a.md": "a", "/b.md": "b", "/c.md": "c"}, false)
	s.f.memory.edit(storeA, "/b.md", ptrTo("b remote"))
	s.write(t, "/a.md", "a local")
	s.write(t, "/d.md", "d local")
	_ = os.Remove(s.file("/c.md"))
	lists := len(s.f.memory.sent("GET "))
	r, err := s.sync.Flush(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantReport(t, r, 0, 2, 0, 0)
	wantRemote(t, s.f, map[string]string{"/a.md": "a local", "/b.md": "b remote", "/c.md": "c", "/d.md": "d local"})
	if got := s.read(t, "/b.md"); got != "b" {
		t.Fatalf("the flush pulled: %q", got)
	}
	if n := len(s.f.memory.sent("GET ")); n != lists {
		t.Fatalf("the flush read the store (%d requests)", n-lists)
	}
	if r, _ = s.sync.Flush(context.Background(), 5*time.Second); r.Pushed+r.Deleted != 0 {
		t.Fatalf("second flush %+v", r)
	}
	r, err = s.sync.FinalSync(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantReport(t, r, 1, 0, 0, 0) // the first observation of /c.md's deletion
	if got := s.read(t, "/b.md"); got != "b remote" {
		t.Fatalf("b.md %q", got)
	}
	r, _ = s.sync.FinalSync(context.Background(), 5*time.Second)
	wantReport(t, r, 0, 0, 1, 0) // the second
	wantRemote(t, s.f, map[string]string{"/a.md": "a local", "/b.md": "b remote", "/d.md": "d local"})
}

func TestMemorySyncBoundsIncludeWaitingForAPassInProgress(t *testing.T) {
	s := mountStore(t, map[string]string{"/a.md": "a"}, false)
	release := make(chan struct{})
	s.f.memory.mu.Lock()
	s.f.memory.before = func(r *http.Request, _ int) int {
		if r.Method == "GET" {
			<-release
		}
		return 0
	}
	s.f.memory.mu.Unlock()
	go func() { _, _ = s.sync.SyncOnce(context.Background()) }()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	_, err := s.sync.Flush(context.Background(), 200*time.Millisecond)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("flush: %v after %v", err, time.Since(start))
	}
	close(release)
}

func TestMemorySyncNeverWritesThroughASymlinkOutOfTheRoot(t *testing.T) {
	s := mountStore(t, map[string]string{"/ok.md": "ok"}, false)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(s.dir, "evil")); err != nil {
		t.Fatal(err)
	}
	s.f.memory.add(storeA, map[string]string{"/evil/x.md": "x", "/later.md": "l"})
	r := s.pass(t)
	if r.Pulled != 1 || r.Pushed != 0 {
		t.Fatalf("report %+v", r)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("wrote outside: %v", entries)
	}
	if got := s.read(t, "/later.md"); got != "l" {
		t.Fatalf("later.md %q", got)
	}
	// A synchronized path below a directory a tool swapped for a symlink: its remote delete removes nothing outside.
	_ = os.WriteFile(filepath.Join(outside, "y.md"), []byte("outside"), 0o600)
	s.write(t, "/sub/y.md", "y")
	s.pass(t) // created remotely
	if err := os.Rename(filepath.Join(s.dir, "sub"), filepath.Join(t.TempDir(), "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.dir, "sub")); err != nil {
		t.Fatal(err)
	}
	s.f.memory.edit(storeA, "/sub/y.md", nil)
	s.pass(t)
	if b, err := os.ReadFile(filepath.Join(outside, "y.md")); err != nil || string(b) != "outside" {
		t.Fatalf("outside y.md: %q %v", b, err)
	}
	if err := s.sync.Dispose(true); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("outside after dispose: %v", entries)
	}
}

func TestMemorySyncSkipsFilesThatAreNotMemories(t *testing.T) {
	s := mountStore(t, map[string]string{}, false)
	s.write(t, "/cafe\u0301.md", "decomposed: not NFC") // the API would store it as /café.md
	s.write(t, "/big.md", strings.Repeat("x", DefaultMemoryContentBytes+1))
	if err := os.WriteFile(s.file("/bin.dat"), []byte{0xff, 0xfe, 0x00}, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", s.file("/link.md")); err != nil {
		t.Fatal(err)
	}
	s.write(t, "/.mango-sync-leftover", "tmp")
	s.write(t, "/caf\u00e9.md", "composed: fine")
	wantReport(t, s.pass(t), 0, 1, 0, 0)
	wantRemote(t, s.f, map[string]string{"/caf\u00e9.md": "composed: fine"})
}

func TestMemorySyncIfDueRunsAtTheCadenceAndTheTimerSyncs(t *testing.T) {
	f := newFake(t)
	f.memory.add(storeA, map[string]string{"/a.md": "a"})
	m, err := NewMemorySync(f.workClient(t), []MemoryAttachment{{MemoryStoreID: storeA, Access: "read_write", MountPath: "/mnt/memory/notes"}},
		&MemorySyncOptions{Root: t.TempDir(), Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	roots, err := m.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Dispose(true)
	_ = os.WriteFile(filepath.Join(roots[0].Path, "a.md"), []byte("edited"), 0o600)
	if r, err := m.SyncIfDue(context.Background()); r != nil || err != nil {
		t.Fatalf("mounted moments ago, a pass is not due: %+v %v", r, err)
	}
	wantRemote(t, f, map[string]string{"/a.md": "a"})

	// A short cadence: the timer pushes without any call.
	f2 := newFake(t)
	f2.memory.add(storeA, map[string]string{"/a.md": "a"})
	m2, _ := NewMemorySync(f2.workClient(t), []MemoryAttachment{{MemoryStoreID: storeA, Access: "read_write", MountPath: "/mnt/memory/notes"}},
		&MemorySyncOptions{Root: t.TempDir(), Interval: 100 * time.Millisecond})
	roots, err = m2.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Dispose(true)
	_ = os.WriteFile(filepath.Join(roots[0].Path, "a.md"), []byte("edited"), 0o600)
	for i := 0; i < 100 && f2.memory.contents(storeA)["/a.md"] != "edited"; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	wantRemote(t, f2, map[string]string{"/a.md": "edited"})
	if r, err := m2.SyncIfDue(context.Background()); err != nil || (r != nil && r.Pushed != 0) {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestMemorySyncMountRetriesTemporaryFailuresOnAnEmptiedRoot(t *testing.T) {
	t.Run("a Memory deleted between two attempts is not pushed back", func(t *testing.T) {
		f := newFake(t)
		memories := map[string]string{}
		for i := range 21 {
			memories[fmt.Sprintf("/p/%02d.md", i)] = fmt.Sprintf("note %d", i)
		}
		f.memory.add(storeA, memories)
		lists := 0
		f.memory.before = func(r *http.Request, _ int) int {
			if r.Method != "GET" {
				return 0
			}
			switch lists++; lists {
			case 1:
				return 503 // attempt 1
			case 3:
				// Attempt 2 wrote page 1; before page 2, /p/00.md is deleted remotely and the API answers 502.
				delete(f.memory.stores[storeA], "/p/00.md")
				return 502
			}
			return 0
		}
		m, _ := NewMemorySync(f.workClient(t), []MemoryAttachment{{MemoryStoreID: storeA, Access: "read_write", MountPath: "/mnt/memory/notes"}},
			&MemorySyncOptions{Root: t.TempDir(), Interval: -1, BackoffBase: time.Millisecond})
		roots, err := m.Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer m.Dispose(true)
		local, _ := filepath.Glob(filepath.Join(roots[0].Path, "p", "*.md"))
		if len(local) != 20 || slices.Contains(local, filepath.Join(roots[0].Path, "p", "00.md")) {
			t.Fatalf("local %v", local)
		}
		r, err := m.SyncOnce(context.Background())
		if err != nil || r.Pushed != 0 || r.Deleted != 0 {
			t.Fatalf("%+v %v", r, err)
		}
		if _, ok := f.memory.contents(storeA)["/p/00.md"]; ok || len(f.memory.contents(storeA)) != 20 {
			t.Fatalf("remote %v", slices.Sorted(maps.Keys(f.memory.contents(storeA))))
		}
	})
	t.Run("five attempts in all, then a MemoryMountError", func(t *testing.T) {
		f := newFake(t)
		f.memory.add(storeA, map[string]string{"/a.md": "a"})
		f.memory.before = func(*http.Request, int) int { return 503 }
		m, _ := NewMemorySync(f.workClient(t), []MemoryAttachment{{MemoryStoreID: storeA, MountPath: "/mnt/memory/notes"}},
			&MemorySyncOptions{Root: t.TempDir(), Interval: -1, BackoffBase: time.Millisecond})
		_, err := m.Start(context.Background())
		var mountErr *MemoryMountError
		if !errors.As(err, &mountErr) || !strings.Contains(err.Error(), "after 5 attempts") || len(f.memory.sent("GET ")) != 5 {
			t.Fatalf("err = %v after %d requests", err, len(f.memory.sent("GET ")))
		}
	})
	t.Run("an unreachable service", func(t *testing.T) {
		c := unreachableClient(t)
		m, _ := NewMemorySync(c, []MemoryAttachment{{MemoryStoreID: storeA, MountPath: "/mnt/memory/notes"}},
			&MemorySyncOptions{Root: t.TempDir(), Interval: -1, Attempts: 3, BackoffBase: time.Millisecond})
		_, err := m.Start(context.Background())
		var mountErr *MemoryMountError
		if !errors.As(err, &mountErr) || !strings.Contains(err.Error(), "after 3 attempts") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a refused token at once, temporary", func(t *testing.T) {
		f := newFake(t)
		f.memory.add(storeA, map[string]string{"/a.md": "a"})
		f.memory.before = func(*http.Request, int) int { return 401 }
		m, _ := NewMemorySync(f.workClient(t), []MemoryAttachment{{MemoryStoreID: storeA, MountPath: "/mnt/memory/notes"}},
			&MemorySyncOptions{Root: t.TempDir(), Interval: -1, BackoffBase: time.Millisecond})
		_, err := m.Start(context.Background())
		var mountErr *MemoryMountError
		if !errors.As(err, &mountErr) || strings.Contains(err.Error(), "attempts") || len(f.memory.sent("GET ")) != 1 {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a Store that no longer exists is not mounted, the others are", func(t *testing.T) {
		f := newFake(t)
		f.memory.add(storeB, map[string]string{"/ref.md": "reference"})
		root := t.TempDir()
		var warned []error
		m, _ := NewMemorySync(f.workClient(t), []MemoryAttachment{
			{MemoryStoreID: storeA, MountPath: "/mnt/memory/notes"}, {MemoryStoreID: storeB, MountPath: "/mnt/memory/reference"},
		}, &MemorySyncOptions{Root: root, Interval: -1, BackoffBase: time.Millisecond, OnWarning: func(err error) { warned = append(warned, err) }})
		roots, err := m.Start(context.Background())
		if err != nil || len(roots) != 1 || roots[0].MemoryStoreID != storeB || len(f.memory.sent("GET /v1/memory_stores/"+storeA)) != 1 {
			t.Fatalf("roots %v err %v", roots, err)
		}
		if len(warned) != 1 || !strings.Contains(warned[0].Error(), storeA+" no longer exists") {
			t.Fatalf("warned %v", warned)
		}
		if got := names(t, root); len(got) != 1 || got[0] != "reference" {
			t.Fatalf("root holds %v", got)
		}
		if _, err := m.FinalSync(context.Background(), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	})
}

func TestNormalizeMemoryPath(t *testing.T) {
	for raw, want := range map[string]string{
		"/a.md": "/a.md", "/Dir/Case.md": "/Dir/Case.md", "/cafe\u0301": "/caf\u00e9",
		"/" + strings.Repeat("a/", 19) + "b": "/" + strings.Repeat("a/", 19) + "b",
	} {
		if got, err := NormalizeMemoryPath(raw); err != nil || got != want {
			t.Fatalf("%q: %q %v", raw, got, err)
		}
	}
	for _, raw := range []string{"", "a.md", "/", "/a/", "/a//b", "/./a", "/a/..", "/a\x00b", "/a\tb", "/a\u200bb", "/a\u2028b",
		"/" + strings.Repeat("a/", 20) + "b", "/" + strings.Repeat("x", 1024), "/\xff"} {
		if got, err := NormalizeMemoryPath(raw); err == nil {
			t.Fatalf("%q accepted as %q", raw, got)
		}
	}
}

// The cases of libs/domain/memory/src/memory-reconcile.spec.ts.
func TestPlanPullRemoteWins(t *testing.T) {
	type b = map[string]memoryBaseline
	for _, c := range []struct {
		name   string
		base   b
		remote []remoteMemoryState
		local  map[string]string
		want   []reconcileStep
	}{
		{"unchanged everywhere", b{"/a": {"m1", "s1"}}, []remoteMemoryState{{"m1", "/a", "s1"}}, map[string]string{"/a": "s1"}, nil},
		{"edited locally only: push handles it", b{"/a": {"m1", "s1"}}, []remoteMemoryState{{"m1", "/a", "s1"}}, map[string]string{"/a": "s2"}, nil},
		{"new remotely", b{}, []remoteMemoryState{{"m1", "/a", "s1"}}, nil, []reconcileStep{{kind: stepDownload, path: "/a", id: "m1"}}},
		{"new remotely, same locally: adopt", b{}, []remoteMemoryState{{"m1", "/a", "s1"}}, map[string]string{"/a": "s1"}, []reconcileStep{{kind: stepAdopt, path: "/a", id: "m1", sha: "s1"}}},
		{"new remotely, other locally: conflict", b{}, []remoteMemoryState{{"m1", "/a", "s1"}}, map[string]string{"/a": "s9"}, []reconcileStep{{kind: stepDownload, path: "/a", id: "m1", conflict: true}}},
		{"changed remotely", b{"/a": {"m1", "s1"}}, []remoteMemoryState{{"m1", "/a", "s2"}}, map[string]string{"/a": "s1"}, []reconcileStep{{kind: stepDownload, path: "/a", id: "m1"}}},
		{"changed both: conflict", b{"/a": {"m1", "s1"}}, []remoteMemoryState{{"m1", "/a", "s2"}}, map[string]string{"/a": "s3"}, []reconcileStep{{kind: stepDownload, path: "/a", id: "m1", conflict: true}}},
		{"changed remotely, deleted locally", b{"/a": {"m1", "s1"}}, []remoteMemoryState{{"m1", "/a", "s2"}}, nil, []reconcileStep{{kind: stepDownload, path: "/a", id: "m1"}}},
		{"re-created remotely with the same digest", b{"/a": {"m1", "s1"}}, []remoteMemoryState{{"m2", "/a", "s1"}}, map[string]string{"/a": "s1"}, []reconcileStep{{kind: stepAdopt, path: "/a", id: "m2", sha: "s1"}}},
		{"deleted remotely", b{"/a": {"m1", "s1"}}, nil, map[string]string{"/a": "s1"}, []reconcileStep{{kind: stepRemove, path: "/a"}}},
		{"deleted remotely, edited locally: conflict", b{"/a": {"m1", "s1"}}, nil, map[string]string{"/a": "s2"}, []reconcileStep{{kind: stepRemove, path: "/a", conflict: true}}},
		{"deleted on both sides", b{"/a": {"m1", "s1"}}, nil, nil, []reconcileStep{{kind: stepForget, path: "/a"}}},
	} {
		if got := planPull(c.base, c.remote, c.local); !slices.Equal(got, c.want) {
			t.Fatalf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestPlanPushAndPlanDeletions(t *testing.T) {
	base := map[string]memoryBaseline{"/a": {"m1", "s1"}, "/b": {"m2", "s2"}, "/gone": {"m3", "s3"}, "/again": {"m4", "s4"}}
	local := map[string]string{"/new": "n", "/a": "s1", "/b": "s9"}
	got := planPush(base, []string{"/new", "/a", "/b"}, local)
	want := []reconcileStep{{kind: stepCreate, path: "/new"}, {kind: stepUpdate, path: "/b", id: "m2", expectedSHA: "s2"}}
	if !slices.Equal(got, want) {
		t.Fatalf("push %+v", got)
	}
	got = planDeletions(base, local, map[string]int{"/again": 1})
	sort.Slice(got, func(i, j int) bool { return got[i].path < got[j].path })
	want = []reconcileStep{{kind: stepDelete, path: "/again", id: "m4", expectedSHA: "s4", seen: 2}, {kind: stepWait, path: "/gone", seen: 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("deletions %+v", got)
	}
}

func TestSessionMemoryAttachmentsReadsTheSnapshot(t *testing.T) {
	got, err := SessionMemoryAttachments([]byte(`{"resources":[{"type":"file","file_id":"file_x"},
		{"type":"memory_store","memory_store_id":"` + storeA + `","access":"read_only","instructions":null,"name":"Notes","description":"","mount_path":"/mnt/memory/notes"}]}`))
	want := []MemoryAttachment{{MemoryStoreID: storeA, Access: "read_only", MountPath: "/mnt/memory/notes", Name: "Notes"}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%+v %v", got, err)
	}
	if got, err := SessionMemoryAttachments([]byte(`{"id":"sesn_x"}`)); err != nil || len(got) != 0 {
		t.Fatalf("%+v %v", got, err)
	}
}

// memorySession is a Session body attaching storeA read_write (as "notes") and storeB read_only (as
// "reference"), pinning no Skill.
func memorySession() string {
	b, _ := json.Marshal(map[string]any{"id": sessID, "type": "session", "agent": map[string]any{"skills": []any{}}, "resources": []any{
		map[string]any{"type": "memory_store", "memory_store_id": storeA, "access": "read_write", "instructions": nil, "name": "Notes", "description": "", "mount_path": "/mnt/memory/notes"},
		map[string]any{"type": "memory_store", "memory_store_id": storeB, "access": "read_only", "instructions": nil, "name": "Reference", "description": "", "mount_path": "/mnt/memory/reference"},
	}})
	return string(b)
}

func memoryFake(t *testing.T) *fakeMango {
	f := newFake(t)
	f.session = memorySession()
	f.memory.add(storeA, map[string]string{"/notes.md": "remember this"})
	f.memory.add(storeB, map[string]string{"/ref.md": "reference"})
	f.memory.readOnly[storeB] = true
	return f
}

func toolCall(seq int, command string) map[string]any {
	return map[string]any{"seq": seq, "id": fmt.Sprintf("sevt_%d", seq), "type": "agent.tool_use", "name": "bash", "input": map[string]any{"command": command}, "evaluated_permission": "allow"}
}

func resultTexts(posted []map[string]any) []string {
	var out []string
	for _, p := range posted {
		out = append(out, fmt.Sprint(p["content"].([]any)[0].(map[string]any)["text"]))
	}
	return out
}

func TestSessionItemMountsMemoryForTheToolFactoryAndSyncsAfterCallsAndAtTheEnd(t *testing.T) {
	defer func() { memoryNoTimer = false }()
	memoryNoTimer = true // only the pass after a call can push before the second call
	f := memoryFake(t)
	f.history = []map[string]any{{"id": "sevt_1", "type": "user.message", "seq": 1}}
	root := filepath.Join(t.TempDir(), "mnt", "memory")
	notes, reference := filepath.Join(root, "notes"), filepath.Join(root, "reference")
	var setups []ToolSetup
	bash := ToolFunc{ToolName: "bash", Fn: func(_ context.Context, in map[string]any) (string, error) {
		switch in["command"] {
		case "first":
			b, err := os.ReadFile(filepath.Join(notes, "notes.md"))
			if err != nil {
				return "", err
			}
			if err := os.WriteFile(filepath.Join(notes, "after-call.md"), []byte("pushed after a call"), 0o600); err != nil {
				return "", err
			}
			_ = os.WriteFile(filepath.Join(reference, "ref.md"), []byte("scribbled"), 0o600)
			return string(b), nil
		case "second":
			// The pass after the first call (the cadence had elapsed) pushed its file already.
			remote := f.memory.contents(storeA)["/after-call.md"]
			return remote, os.WriteFile(filepath.Join(notes, "at-the-end.md"), []byte("pushed by the final sync"), 0o600)
		}
		return "", errors.New("unknown command")
	}}
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, LeaseTTL: 3 * time.Second, MaxIdle: 1500 * time.Millisecond,
		MemoryRoot: root, MemorySyncInterval: 200 * time.Millisecond,
		NewTools: func(_ context.Context, s ToolSetup) ([]Tool, error) {
			setups = append(setups, s)
			// The Stores are mounted before the tools are built.
			if _, err := os.Stat(filepath.Join(notes, "notes.md")); err != nil {
				return nil, err
			}
			return []Tool{bash}, nil
		}}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	go func() {
		time.Sleep(400 * time.Millisecond) // past the 200 ms cadence: the first call's pass is due
		f.stream <- toolCall(2, "first")
		time.Sleep(400 * time.Millisecond)
		f.stream <- toolCall(3, "second")
		time.Sleep(300 * time.Millisecond)
		f.stream <- map[string]any{"seq": 4, "id": "sevt_4", "type": "session.status_idle", "stop_reason": map[string]any{"type": "end_turn"}}
		f.endIdle()
	}()
	if err := handle(w, item); err != nil {
		t.Fatal(err)
	}
	want := []ToolSetup{{SessionID: sessID, Roots: []ToolRoot{{Path: notes, MemoryStoreID: storeA}, {Path: reference, ReadOnly: true, MemoryStoreID: storeB}}}}
	if len(setups) != 1 || !slices.EqualFunc(setups, want, func(a, b ToolSetup) bool {
		return a.SessionID == b.SessionID && a.Workdir == b.Workdir && slices.Equal(a.Roots, b.Roots)
	}) {
		t.Fatalf("setups %+v", setups)
	}
	s := f.snapshot()
	if got := resultTexts(s.posted); !slices.Equal(got, []string{"remember this", "pushed after a call"}) {
		t.Fatalf("results %q", got)
	}
	if got := f.memory.contents(storeA); !maps.Equal(got, map[string]string{
		"/notes.md": "remember this", "/after-call.md": "pushed after a call", "/at-the-end.md": "pushed by the final sync"}) {
		t.Fatalf("remote %v", got)
	}
	if got := f.memory.contents(storeB); !maps.Equal(got, map[string]string{"/ref.md": "reference"}) {
		t.Fatalf("the read_only Store changed: %v", got)
	}
	for _, w := range f.memory.writes() {
		if strings.Contains(w, storeB) {
			t.Fatalf("a write to the read_only Store: %s", w)
		}
	}
	if len(s.fails) != 0 || len(s.stops) != 1 {
		t.Fatalf("fails %v stops %v", s.fails, s.stops)
	}
	// The mounts are removed; the final sync and flush ran before the final Stop, under the Work token.
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
	stop := slices.IndexFunc(s.log, func(l string) bool { return strings.HasSuffix(l, "/stop") })
	for i, l := range s.log {
		if strings.Contains(l, "/memory_stores/") {
			if i > stop {
				t.Fatalf("%s after the final Stop", l)
			}
			if s.auth[i] != "Bearer mango_wt_token" {
				t.Fatalf("%s used %q", l, s.auth[i])
			}
		}
	}
}

func TestSessionItemStoppedMidRunFlushesButDoesNotPullOrDelete(t *testing.T) {
	f := memoryFake(t)
	f.heartbeats = []int{200, 200, 299} // the second renewal says stopping
	root := t.TempDir()
	notes := filepath.Join(root, "notes")
	bash := ToolFunc{ToolName: "bash", Fn: func(ctx context.Context, _ map[string]any) (string, error) {
		_ = os.WriteFile(filepath.Join(notes, "new.md"), []byte("flushed"), 0o600)
		_ = os.Remove(filepath.Join(notes, "notes.md"))
		<-ctx.Done() // runs until the stop request cancels it
		return "", ctx.Err()
	}}
	f.stream <- toolCall(1, "x")
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Tools: []Tool{bash}, LeaseTTL: 3 * time.Second, MemoryRoot: root}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	if err := handle(w, item); err != nil {
		t.Fatal(err)
	}
	if got := f.memory.contents(storeA); !maps.Equal(got, map[string]string{"/notes.md": "remember this", "/new.md": "flushed"}) {
		t.Fatalf("remote %v", got)
	}
	// Only the mount listed the Stores: no full pass ran (not a clean end).
	if n := len(f.memory.sent("GET /v1/memory_stores/" + storeA + "/memories?")); n != 1 {
		t.Fatalf("%d listings of the writable Store", n)
	}
	if s := f.snapshot(); len(s.stops) != 1 || len(s.fails) != 0 {
		t.Fatalf("stops %v fails %v", s.stops, s.fails)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

func TestSessionItemWhoseLeaseIsLostWritesNoMemory(t *testing.T) {
	f := memoryFake(t)
	f.heartbeats = []int{200, 412}
	root := t.TempDir()
	bash := ToolFunc{ToolName: "bash", Fn: func(ctx context.Context, _ map[string]any) (string, error) {
		_ = os.WriteFile(filepath.Join(root, "notes", "new.md"), []byte("fenced"), 0o600)
		<-ctx.Done()
		return "", ctx.Err()
	}}
	f.stream <- toolCall(1, "x")
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Tools: []Tool{bash}, LeaseTTL: 3 * time.Second, MemoryRoot: root}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	if err := handle(w, item); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("err = %v", err)
	}
	if w := f.memory.writes(); len(w) != 0 {
		t.Fatalf("writes %v", w)
	}
	if s := f.snapshot(); len(s.stops) != 0 || len(s.fails) != 0 {
		t.Fatalf("stops %v fails %v", s.stops, s.fails)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

func TestSessionItemWithATemporaryMemoryFailureLeavesTheLeaseToExpire(t *testing.T) {
	defer func(base time.Duration) { memoryRetryBase = base }(memoryRetryBase)
	memoryRetryBase = time.Millisecond
	f := memoryFake(t)
	f.session = strings.Replace(memorySession(), `"skills":[]`, `"skills":[{"type":"custom","skill_id":"`+skillA+`","version":"1"}]`, 1)
	f.addSkill(skillA, "1", "pdf", "pdf", tarGz(t, member{path: "pdf/SKILL.md", body: md("pdf")}), 1)
	f.memory.before = func(r *http.Request, _ int) int { return 503 }
	f.stream <- toolCall(1, "x")
	work, root := t.TempDir(), t.TempDir()
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Tools: []Tool{noToolMayRun(t)}, Workdir: work, MemoryRoot: root, LeaseTTL: 3 * time.Second}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	err := w.HandleItem(context.Background(), item, nil)
	var temporary *MemoryMountError
	if !errors.As(err, &temporary) || !strings.Contains(err.Error(), "after 5 attempts") {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.memory.sent("GET ")); n != 5 {
		t.Fatalf("%d Memory requests, want 5", n)
	}
	s := f.snapshot()
	if len(s.fails) != 0 || len(s.stops) != 0 || len(s.posted) != 0 {
		t.Fatalf("fails %v stops %v posted %v", s.fails, s.stops, s.posted)
	}
	for _, l := range s.log {
		if strings.Contains(l, "/events") {
			t.Fatalf("the tool runner started: %s", l)
		}
	}
	// Neither the mounts nor the staged Skills remain.
	if got := append(names(t, work), names(t, root)...); len(got) != 0 {
		t.Fatalf("left %v", got)
	}
}

func TestSessionItemWithADeletedMemoryStoreRunsWithoutIt(t *testing.T) {
	f := memoryFake(t)
	f.memory.mu.Lock()
	delete(f.memory.stores, storeB)
	f.memory.mu.Unlock()
	f.history = []map[string]any{{"id": "sevt_1", "type": "user.message", "seq": 1}}
	f.stream <- toolCall(2, "x")
	root := t.TempDir()
	var setups []ToolSetup
	bash := ToolFunc{ToolName: "bash", Fn: func(context.Context, map[string]any) (string, error) { return "ran", nil }}
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, MemoryRoot: root, LeaseTTL: 3 * time.Second,
		MaxIdle: 1500 * time.Millisecond, NewTools: func(_ context.Context, setup ToolSetup) ([]Tool, error) {
			setups = append(setups, setup)
			return []Tool{bash}, nil
		}}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	go func() {
		time.Sleep(300 * time.Millisecond)
		f.stream <- map[string]any{"seq": 3, "id": "sevt_3", "type": "session.status_idle", "stop_reason": map[string]any{"type": "end_turn"}}
		f.endIdle()
	}()
	if err := handle(w, item); err != nil {
		t.Fatal(err)
	}
	s := f.snapshot()
	if len(s.fails) != 0 || len(s.stops) != 1 || len(resultTexts(s.posted)) != 1 {
		t.Fatalf("fails %v stops %v posted %v", s.fails, s.stops, s.posted)
	}
	if len(setups) != 1 || len(setups[0].Roots) != 1 || setups[0].Roots[0].MemoryStoreID != storeA {
		t.Fatalf("setups %+v", setups)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

func TestSessionItemCleanEndRunsOneFinalFullSyncThenTheFlush(t *testing.T) {
	f := memoryFake(t)
	f.history = []map[string]any{{"id": "sevt_1", "type": "user.message", "seq": 1}}
	root := t.TempDir()
	notes := filepath.Join(root, "notes")
	bash := ToolFunc{ToolName: "bash", Fn: func(context.Context, map[string]any) (string, error) {
		_ = os.Remove(filepath.Join(notes, "notes.md"))
		return "ok", os.WriteFile(filepath.Join(notes, "new.md"), []byte("from the tool"), 0o600)
	}}
	// An hour's cadence: no pass after the call, and no timer pass.
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Tools: []Tool{bash}, LeaseTTL: 3 * time.Second,
		MaxIdle: 1500 * time.Millisecond, MemoryRoot: root, MemorySyncInterval: time.Hour}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	go func() {
		time.Sleep(300 * time.Millisecond)
		f.stream <- toolCall(2, "x")
		time.Sleep(300 * time.Millisecond)
		f.stream <- map[string]any{"seq": 3, "id": "sevt_3", "type": "session.status_idle", "stop_reason": map[string]any{"type": "end_turn"}}
		f.endIdle()
	}()
	if err := handle(w, item); err != nil {
		t.Fatal(err)
	}
	// One full pass (it lists both Stores in the basic view; the flush lists nothing): the new file is
	// created, the deletion seen once is not pushed.
	for _, store := range []string{storeA, storeB} {
		if n := len(f.memory.sent("GET /v1/memory_stores/" + store + "/memories?limit=100&view=basic")); n != 1 {
			t.Fatalf("%s: %d full passes, want 1 (%v)", store, n, f.memory.sent("GET "))
		}
	}
	if got := f.memory.contents(storeA); !maps.Equal(got, map[string]string{"/notes.md": "remember this", "/new.md": "from the tool"}) {
		t.Fatalf("remote %v", got)
	}
	if s := f.snapshot(); len(s.stops) != 1 || len(s.posted) != 1 {
		t.Fatalf("stops %v posted %v", s.stops, s.posted)
	}
}
