package worker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mango.dev/sdk/mango"
)

// memoryRootHolderEnv makes the test binary a worker process that mounts storeA below a Memory root and
// dies mid-item (see TestMain): MANGO_TEST_MEMORY_ROOT_HOLDER=<root> <base URL>.
const memoryRootHolderEnv = "MANGO_TEST_MEMORY_ROOT_HOLDER"

// TestMain doubles as that worker process.
func TestMain(m *testing.M) {
	if args := os.Getenv(memoryRootHolderEnv); args != "" {
		os.Exit(holdMemoryRoot(strings.Fields(args)))
	}
	os.Exit(m.Run())
}

// holdMemoryRoot mounts storeA as "notes" below root, writes a file no pass has pushed, says "mounted"
// and waits to be killed, without any teardown.
func holdMemoryRoot(args []string) int {
	client, err := mango.New(args[1], "mango_wt_token", mango.WithMaxRetries(0))
	if err == nil {
		var m *MemorySync
		m, err = NewMemorySync(client, []MemoryAttachment{{MemoryStoreID: storeA, Access: "read_write", MountPath: "/mnt/memory/notes"}},
			&MemorySyncOptions{Root: args[0], Interval: -1})
		if err == nil {
			var roots []ToolRoot
			if roots, err = m.Start(context.Background()); err == nil {
				err = os.WriteFile(filepath.Join(roots[0].Path, "unsynced.md"), []byte("never pushed"), 0o600)
			}
		}
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("mounted")
	time.Sleep(time.Hour)
	return 0
}

func notesSync(t *testing.T, f *fakeMango, root string, warns *[]error) *MemorySync {
	t.Helper()
	m, err := NewMemorySync(f.workClient(t), []MemoryAttachment{{MemoryStoreID: storeA, Access: "read_write", MountPath: "/mnt/memory/notes"}},
		&MemorySyncOptions{Root: root, Interval: -1, OnWarning: func(err error) { *warns = append(*warns, err) }})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func localTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[filepath.ToSlash(rel)] = "-> " + target
			return err
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMemorySyncTakesOverTheLeftoverMountOfAWorkerProcessThatDied(t *testing.T) {
	f := newFake(t)
	f.memory.add(storeA, map[string]string{"/notes.md": "remember this"})
	root := t.TempDir()
	holder := exec.Command(os.Args[0], "-test.run=^$")
	holder.Env = append(os.Environ(), memoryRootHolderEnv+"="+root+" "+f.srv.URL)
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "mounted\n" {
		t.Fatalf("the holder said %q", line)
	}
	notes := filepath.Join(root, "notes")
	held := map[string]string{MemoryMarkerFile: memoryMarkerContent(storeA), "notes.md": "remember this", "unsynced.md": "never pushed"}

	// While that process lives, the Root is its own: another MemorySync is refused and touches nothing.
	var warns []error
	live := notesSync(t, f, root, &warns)
	if _, err := live.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "in use by another worker") {
		t.Fatalf("err = %v", err)
	}
	if err := live.Dispose(true); err != nil {
		t.Fatal(err)
	}
	if got := localTree(t, notes); !maps.Equal(got, held) {
		t.Fatalf("the live mount changed: %v", got)
	}

	// Killed mid-item (no teardown): its lock died with it, so its mount is a leftover. The next
	// activation removes it with a warning and mounts the Store afresh; the remote is not written.
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	if got := localTree(t, notes); !maps.Equal(got, held) {
		t.Fatalf("the leftover %v", got)
	}
	writesBefore := len(f.memory.writes())
	next := notesSync(t, f, root, &warns)
	roots, err := next.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := localTree(t, roots[0].Path); !maps.Equal(got, map[string]string{MemoryMarkerFile: memoryMarkerContent(storeA), "notes.md": "remember this"}) {
		t.Fatalf("mounted %v", got)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), "removing the leftover mount") {
		t.Fatalf("warnings %v", warns)
	}
	if n := len(f.memory.writes()); n != writesBefore {
		t.Fatalf("the take-over wrote %v", f.memory.writes()[writesBefore:])
	}
	if err := next.Dispose(true); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

func TestMemorySyncLeavesAnExistingRootThatIsNotAMangoMountUntouched(t *testing.T) {
	for name, prepare := range map[string]func(t *testing.T, notes string){
		"a directory of someone's files": func(t *testing.T, notes string) {
			mustWrite(t, filepath.Join(notes, "keep.txt"), "mine")
		},
		"a marker of another format": func(t *testing.T, notes string) {
			mustWrite(t, filepath.Join(notes, MemoryMarkerFile), "version 2\n"+storeA+"\n")
			mustWrite(t, filepath.Join(notes, "keep.txt"), "mine")
		},
		"a marker that is a directory": func(t *testing.T, notes string) {
			mustWrite(t, filepath.Join(notes, MemoryMarkerFile, "keep.txt"), "mine")
		},
		"a symlink to a leftover-looking directory": func(t *testing.T, notes string) {
			elsewhere := filepath.Join(filepath.Dir(filepath.Dir(notes)), "elsewhere")
			mustWrite(t, filepath.Join(elsewhere, MemoryMarkerFile), memoryMarkerContent(storeA))
			if err := os.MkdirAll(filepath.Dir(notes), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, notes); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := memoryFake(t)
			f.stream <- toolCall(1, "x")
			root := filepath.Join(t.TempDir(), "memory")
			notes := filepath.Join(root, "notes")
			prepare(t, notes)
			before := localTree(t, filepath.Dir(root))
			// Through the worker, as an operator meets it: the item leaves its lease to expire (no Fail: the
			// Session is not the cause), its tools never run, and nothing it did not create is removed.
			w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Tools: []Tool{noToolMayRun(t)}, MemoryRoot: root, LeaseTTL: 3 * time.Second}
			item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
			err := w.HandleItem(context.Background(), item, nil)
			var temporary *MemoryMountError
			if !errors.As(err, &temporary) || !strings.Contains(err.Error(), "is not a leftover Mango mount: it is left untouched") {
				t.Fatalf("err = %v", err)
			}
			if got := localTree(t, filepath.Dir(root)); !maps.Equal(got, before) {
				t.Fatalf("files changed: %v, were %v", got, before)
			}
			s := f.snapshot()
			if len(s.fails) != 0 || len(s.stops) != 0 || len(s.posted) != 0 {
				t.Fatalf("fails %v stops %v posted %v", s.fails, s.stops, s.posted)
			}
		})
	}
}

func TestMemorySyncReusesAnEmptyLeftoverRoot(t *testing.T) {
	f := newFake(t)
	f.memory.add(storeA, map[string]string{"/notes.md": "remember this"})
	root := t.TempDir()
	// A process that died between creating the root and writing its marker leaves it empty.
	if err := os.Mkdir(filepath.Join(root, "notes"), 0o700); err != nil {
		t.Fatal(err)
	}
	var warns []error
	m := notesSync(t, f, root, &warns)
	roots, err := m.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Dispose(true) }()
	if got := slices.Sorted(maps.Keys(localTree(t, roots[0].Path))); !slices.Equal(got, []string{MemoryMarkerFile, "notes.md"}) {
		t.Fatalf("mounted %v", got)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), "removing the leftover mount") {
		t.Fatalf("warnings %v", warns)
	}
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
