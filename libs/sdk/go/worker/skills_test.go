package worker

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mango.dev/sdk/mango"
)

const (
	skillA  = "skill_01JD2Y3QX9V5M8K7R6T4W2P0AA"
	skillB  = "skill_01JD2Y3QX9V5M8K7R6T4W2P0BB"
	rosterA = "agent_01JD2Y3QX9V5M8K7R6T4W2P0RR"
)

func md(name string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: The %s skill.\n---\n# %s\n", name, name, name)
}

// member is one tar member; tests make members the upload side never would.
type member struct {
	path     string
	typeflag byte // 0: a regular file
	body     string
	link     string
	mode     int64
}

func tarGz(t *testing.T, members ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, m := range members {
		h := &tar.Header{Name: m.path, Typeflag: m.typeflag, Linkname: m.link, Mode: m.mode, Format: tar.FormatPAX}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(m.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(m.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// addSkill serves a version whose metadata is frozen from archive (directory dir, name name).
func (f *fakeMango) addSkill(id, version, name, dir string, archive []byte, files int) *fakeSkill {
	sum := sha256.Sum256(archive)
	s := &fakeSkill{archive: archive, meta: map[string]any{
		"id": version, "type": "skill_version", "skill_id": id, "version": version, "name": name, "description": "d",
		"directory": dir, "archive_size_bytes": len(archive), "archive_sha256": hex.EncodeToString(sum[:]),
		"expanded_size_bytes": 100, "file_count": files, "created_at": "2026-12-01T10:00:00.000Z",
	}}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.skills == nil {
		f.skills = map[string]*fakeSkill{}
	}
	f.skills[id+"/"+version] = s
	return s
}

func (f *fakeMango) workClient(t *testing.T) *mango.Client {
	c, err := mango.New(f.srv.URL, "mango_wt_token", mango.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fakeMango) count(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, l := range f.log {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

var fast = &StageSkillsOptions{BackoffBase: time.Millisecond}

// tree lists the files below dir ("path" or "path (not a file)").
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.Type().IsRegular() {
			rel += " (not a file)"
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestStageSkillsStagesPrimaryAndRosterPinsAsOneFreshTree(t *testing.T) {
	f := newFake(t)
	f.addSkill(skillA, "1", "pdf", "pdf", tarGz(t,
		member{path: "pdf/SKILL.md", body: md("pdf")}, member{path: "pdf/scripts/run.sh", body: "echo v1", mode: 0o755}), 2)
	f.addSkill(skillA, "2", "pdf", "pdf", tarGz(t,
		member{path: "pdf/", typeflag: tar.TypeDir}, member{path: "pdf/SKILL.md", body: md("pdf")}, member{path: "pdf/scripts/run.sh", body: "echo v2"}), 2)
	f.addSkill(skillB, "1", "xlsx", "xlsx-bundle", tarGz(t, member{path: "xlsx-bundle/SKILL.md", body: md("xlsx")}), 1)
	work := t.TempDir()
	// What an earlier activation (or a tool) left: an old tree with a stale file.
	if err := os.MkdirAll(filepath.Join(work, "skills", "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(work, "skills", "old", "stale.txt"), []byte("stale"), 0o644)

	dir, staged, err := StageSkills(context.Background(), f.workClient(t), work, []SkillPin{
		{SkillID: skillA, Version: "1"}, {SkillID: skillB, Version: "1"}, {SkillID: skillA, Version: "1"},
		{SkillID: skillA, Version: "2", AgentID: rosterA},
	}, fast)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(work, "skills") {
		t.Fatalf("dir %s", dir)
	}
	var got []string
	for _, s := range staged {
		got = append(got, fmt.Sprintf("%s %d", s.Path, s.Files))
	}
	if want := []string{"skills/pdf 2", "skills/xlsx 1", "skills/.agents/" + rosterA + "/pdf 2"}; !slices.Equal(got, want) {
		t.Fatalf("staged %v, want %v (the duplicate pin once)", got, want)
	}
	want := []string{".agents/" + rosterA + "/pdf/SKILL.md", ".agents/" + rosterA + "/pdf/scripts/run.sh", "pdf/SKILL.md", "pdf/scripts/run.sh", "xlsx/SKILL.md"}
	if got := tree(t, dir); !slices.Equal(got, want) {
		t.Fatalf("tree %v, want %v", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pdf/scripts/run.sh")); string(b) != "echo v1" {
		t.Fatalf("primary run.sh %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".agents", rosterA, "pdf/scripts/run.sh")); string(b) != "echo v2" {
		t.Fatalf("roster run.sh %q", b)
	}
	if st, _ := os.Stat(filepath.Join(dir, "pdf/scripts/run.sh")); st.Mode().Perm()&0o100 == 0 {
		t.Fatalf("an executable member stays executable: %v", st.Mode())
	}
	// Only the tree remains below the workdir: no staging directory, no downloaded archive.
	if got := names(t, work); !slices.Equal(got, []string{"skills"}) {
		t.Fatalf("workdir %v", got)
	}
	for i, l := range f.snapshot().log {
		if strings.HasPrefix(l, "GET /v1/skills/") && f.snapshot().auth[i] != "Bearer mango_wt_token" {
			t.Fatalf("%s used %q", l, f.snapshot().auth[i])
		}
	}
	if err := RemoveStagedSkills(work); err != nil {
		t.Fatal(err)
	}
	if got := names(t, work); len(got) != 0 {
		t.Fatalf("after removal %v", got)
	}
}

func TestStageSkillsReplacesASkillsSymlinkLeftByAToolWithoutFollowingIt(t *testing.T) {
	f := newFake(t)
	f.addSkill(skillA, "1", "one", "one", tarGz(t, member{path: "one/SKILL.md", body: md("one")}), 1)
	work, outside := t.TempDir(), t.TempDir()
	_ = os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
	if err := os.Symlink(outside, filepath.Join(work, "skills")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := StageSkills(context.Background(), f.workClient(t), work, []SkillPin{{SkillID: skillA, Version: "1"}}, fast); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(filepath.Join(work, "skills")); err != nil || !st.IsDir() {
		t.Fatalf("skills is not a directory: %v %v", st, err)
	}
	if got := tree(t, filepath.Join(work, "skills")); !slices.Equal(got, []string{"one/SKILL.md"}) {
		t.Fatalf("tree %v", got)
	}
	if got := names(t, outside); !slices.Equal(got, []string{"keep.txt"}) {
		t.Fatalf("the symlink's target was touched: %v", got)
	}
	// A symlink left in place of the tree is removed (unfollowed) too.
	_ = os.RemoveAll(filepath.Join(work, "skills"))
	_ = os.Symlink(outside, filepath.Join(work, "skills"))
	if err := RemoveStagedSkills(work); err != nil {
		t.Fatal(err)
	}
	if got := names(t, outside); !slices.Equal(got, []string{"keep.txt"}) || len(names(t, work)) != 0 {
		t.Fatalf("outside %v, workdir %v", got, names(t, work))
	}
}

func TestStageSkillsRemovesLeftoversOfACrashedStagingWithoutFollowingThem(t *testing.T) {
	f := newFake(t)
	f.addSkill(skillA, "1", "one", "one", tarGz(t, member{path: "one/SKILL.md", body: md("one")}), 1)
	work, outside := t.TempDir(), t.TempDir()
	_ = os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644)
	left := filepath.Join(work, ".skills-staging-0123456789abcdef")
	_ = os.MkdirAll(filepath.Join(left, "tree", "x"), 0o700)
	_ = os.WriteFile(filepath.Join(left, "archive-0.tar.gz"), []byte("partial"), 0o600)
	_ = os.Symlink(outside, filepath.Join(left, "previous"))
	_ = os.Symlink(outside, filepath.Join(work, ".skills-staging-link"))
	if _, _, err := StageSkills(context.Background(), f.workClient(t), work, []SkillPin{{SkillID: skillA, Version: "1"}}, fast); err != nil {
		t.Fatal(err)
	}
	if got := names(t, work); !slices.Equal(got, []string{"skills"}) {
		t.Fatalf("workdir %v", got)
	}
	if got := names(t, outside); !slices.Equal(got, []string{"keep.txt"}) {
		t.Fatalf("outside %v", got)
	}
}

func TestStageSkillsPermanentFailuresLeaveThePriorTreeAndNothingElse(t *testing.T) {
	ok := func(t *testing.T) []byte { return tarGz(t, member{path: "p/SKILL.md", body: md("p")}) }
	for _, tc := range []struct {
		name    string
		pins    []SkillPin
		limits  SkillLimits
		setup   func(t *testing.T, f *fakeMango)
		message string
	}{
		{name: "a version the Session did not pin (404)", setup: func(*testing.T, *fakeMango) {}, message: "not found"},
		{name: "a pin that is not frozen (latest)", pins: []SkillPin{{SkillID: skillA, Version: "latest"}}, message: "not a frozen version number"},
		{name: "a pin that is not a Skill id", pins: []SkillPin{{SkillID: "skill_../x", Version: "1"}}, message: "not a Skill id"},
		{name: "metadata of another version", setup: func(t *testing.T, f *fakeMango) {
			f.addSkill(skillA, "1", "p", "p", ok(t), 1).meta["version"] = "2"
		}, message: "not a valid Skill version"},
		{name: "metadata with an unsafe directory", setup: func(t *testing.T, f *fakeMango) {
			f.addSkill(skillA, "1", "p", "..", ok(t), 1)
		}, message: "not a valid Skill version"},
		{name: "metadata with an invalid name", setup: func(t *testing.T, f *fakeMango) {
			f.addSkill(skillA, "1", "P Q", "p", ok(t), 1)
		}, message: "not a valid Skill version"},
		{name: "an archive whose bytes differ from the frozen digest (same length)", setup: func(t *testing.T, f *fakeMango) {
			s := f.addSkill(skillA, "1", "p", "p", ok(t), 1)
			s.archive = bytes.Repeat([]byte{'x'}, len(s.archive))
		}, message: "SHA-256"},
		{name: "an archive longer than the frozen length", setup: func(t *testing.T, f *fakeMango) {
			s := f.addSkill(skillA, "1", "p", "p", ok(t), 1)
			s.archive = append(s.archive, "trailing"...)
		}, message: "is longer than its"},
		{name: "a symlink member", setup: crafted(member{path: "p/SKILL.md", body: md("p")}, member{path: "p/link", typeflag: tar.TypeSymlink, link: "/etc/passwd"}), message: "SymbolicLink"},
		{name: "a hard link member", setup: crafted(member{path: "p/SKILL.md", body: md("p")}, member{path: "p/hard", typeflag: tar.TypeLink, link: "p/SKILL.md"}), message: "has a Link member"},
		{name: "a character device", setup: crafted(member{path: "p/SKILL.md", body: md("p")}, member{path: "p/tty", typeflag: tar.TypeChar}), message: "CharacterDevice"},
		{name: "a block device", setup: crafted(member{path: "p/SKILL.md", body: md("p")}, member{path: "p/sda", typeflag: tar.TypeBlock}), message: "BlockDevice"},
		{name: "a FIFO", setup: crafted(member{path: "p/SKILL.md", body: md("p")}, member{path: "p/fifo", typeflag: tar.TypeFifo}), message: "FIFO"},
		{name: "a .. member", setup: crafted(member{path: "p/SKILL.md", body: md("p")}, member{path: "p/../../escape", body: "x"}), message: `unsafe member "p/../../escape": the path has a ".." segment`},
		{name: "a ../x member", setup: crafted(member{path: "../x", body: "x"}), message: "unsafe member"},
		{name: "an absolute member", setup: crafted(member{path: "/tmp/escape", body: "x"}), message: "the path is absolute"},
		{name: "a member with a backslash", setup: crafted(member{path: `p\..\x`, body: "x"}), message: "backslash"},
		{name: "a member with a control character", setup: crafted(member{path: "p/a\nb", body: "x"}), message: "control character"},
		{name: "a member outside the directory", setup: crafted(member{path: "p/SKILL.md", body: md("p")}, member{path: "q/x", body: "x"}), message: "outside"},
		{name: "the same member twice", setup: crafted(member{path: "p/SKILL.md", body: md("p")}, member{path: "p/SKILL.md", body: md("p")}), message: "twice"},
		{name: "a path that is a file and a directory", setup: crafted(member{path: "p/a", body: "x"}, member{path: "p/a/b", body: "y"}), message: "both a file and a directory"},
		{name: "bytes that are not a gzip tar", setup: func(t *testing.T, f *fakeMango) {
			f.addSkill(skillA, "1", "p", "p", []byte("not an archive at all"), 1)
		}, message: "not a valid gzip tar"},
		{name: "a truncated tar inside a valid digest", setup: func(t *testing.T, f *fakeMango) {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			tw := tar.NewWriter(zw)
			_ = tw.WriteHeader(&tar.Header{Name: "p/SKILL.md", Typeflag: tar.TypeReg, Size: 100, Mode: 0o644})
			_, _ = tw.Write([]byte("short"))
			_ = zw.Close()
			f.addSkill(skillA, "1", "p", "p", buf.Bytes(), 1)
		}, message: "not a valid gzip tar"},
		{name: "two pinned Skills with the same name", pins: []SkillPin{{SkillID: skillA, Version: "1"}, {SkillID: skillB, Version: "1"}},
			setup: func(t *testing.T, f *fakeMango) {
				f.addSkill(skillA, "1", "p", "p", ok(t), 1)
				f.addSkill(skillB, "1", "p", "p", ok(t), 1)
			}, message: `both named "p"`},
		{name: "the pins limit", pins: twoPins, limits: SkillLimits{Pins: 1}, setup: twoSkills, message: "at most 1 can be staged"},
		{name: "the files limit", pins: twoPins, limits: SkillLimits{Files: 1}, setup: twoSkills, message: "more than 1 files"},
		{name: "the compressed bytes limit", pins: twoPins, limits: SkillLimits{CompressedBytes: 10}, setup: twoSkills, message: "more than 10 compressed bytes"},
		{name: "the expanded bytes limit", pins: twoPins, limits: SkillLimits{ExpandedBytes: 10}, setup: twoSkills, message: "more than 10 expanded bytes"},
		// The metadata understates the archive: the limits hold on the actual members too.
		{name: "the files limit, on the members", limits: SkillLimits{Files: 2}, setup: func(t *testing.T, f *fakeMango) {
			f.addSkill(skillA, "1", "p", "p", tarGz(t, member{path: "p/SKILL.md", body: md("p")}, member{path: "p/a", body: "a"}, member{path: "p/b", body: "b"}), 1)
		}, message: "more than 2 files"},
		{name: "the expanded bytes limit, on the members", limits: SkillLimits{ExpandedBytes: 150}, setup: func(t *testing.T, f *fakeMango) {
			f.addSkill(skillA, "1", "p", "p", tarGz(t, member{path: "p/SKILL.md", body: md("p")}, member{path: "p/big", body: strings.Repeat("x", 200)}), 2)
		}, message: "more than 150 expanded bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			pins := tc.pins
			if pins == nil {
				pins = []SkillPin{{SkillID: skillA, Version: "1"}}
			}
			work := t.TempDir()
			_ = os.MkdirAll(filepath.Join(work, "skills", "prior"), 0o755)
			_, _, err := StageSkills(context.Background(), f.workClient(t), work, pins, &StageSkillsOptions{Limits: tc.limits, BackoffBase: time.Millisecond})
			var permanent *SkillStagingError
			if !errors.As(err, &permanent) || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("err = %v (%T), want a SkillStagingError with %q", err, err, tc.message)
			}
			if got := names(t, work); !slices.Equal(got, []string{"skills"}) {
				t.Fatalf("workdir %v", got)
			}
			if got := names(t, filepath.Join(work, "skills")); !slices.Equal(got, []string{"prior"}) {
				t.Fatalf("skills %v", got)
			}
			if n := f.count("GET /v1/skills/"); n > 2*len(pins) {
				t.Fatalf("a permanent failure is not retried: %d Skills requests", n)
			}
		})
	}
}

var twoPins = []SkillPin{{SkillID: skillA, Version: "1"}, {SkillID: skillB, Version: "1"}}

func twoSkills(t *testing.T, f *fakeMango) {
	f.addSkill(skillA, "1", "p", "p", tarGz(t, member{path: "p/SKILL.md", body: md("p")}), 1)
	f.addSkill(skillB, "1", "q", "q", tarGz(t, member{path: "q/SKILL.md", body: md("q")}), 1)
}

// crafted serves skillA version 1 as an archive of members with its digest frozen from them, so only
// the member checks catch it.
func crafted(members ...member) func(t *testing.T, f *fakeMango) {
	return func(t *testing.T, f *fakeMango) { f.addSkill(skillA, "1", "p", "p", tarGz(t, members...), 1) }
}

func TestStageSkillsRetriesTemporaryFailuresThenGivesUpForReclaim(t *testing.T) {
	pins := []SkillPin{{SkillID: skillA, Version: "1"}}
	archive := tarGz(t, member{path: "p/SKILL.md", body: md("p")})

	t.Run("an unreachable service, after the attempts", func(t *testing.T) {
		c := unreachableClient(t)
		work := t.TempDir()
		_, _, err := StageSkills(context.Background(), c, work, pins, &StageSkillsOptions{Attempts: 3, BackoffBase: time.Millisecond})
		var temporary *SkillRetrievalError
		if !errors.As(err, &temporary) || !strings.Contains(err.Error(), "after 3 attempts") {
			t.Fatalf("err = %v", err)
		}
		if got := names(t, work); len(got) != 0 {
			t.Fatalf("workdir %v", got)
		}
	})
	t.Run("503 and 429 are retried, then it stages", func(t *testing.T) {
		f := newFake(t)
		f.addSkill(skillA, "1", "p", "p", archive, 1)
		f.skillErrs = []int{503, 429, 500, 408}
		work := t.TempDir()
		if _, _, err := StageSkills(context.Background(), f.workClient(t), work, pins, fast); err != nil {
			t.Fatal(err)
		}
		if got := tree(t, filepath.Join(work, "skills")); !slices.Equal(got, []string{"p/SKILL.md"}) {
			t.Fatalf("tree %v", got)
		}
	})
	t.Run("five attempts in all by default", func(t *testing.T) {
		f := newFake(t)
		f.addSkill(skillA, "1", "p", "p", archive, 1)
		f.skillErrs = []int{503, 503, 503, 503, 503, 503}
		work := t.TempDir()
		_, _, err := StageSkills(context.Background(), f.workClient(t), work, pins, fast)
		var temporary *SkillRetrievalError
		if !errors.As(err, &temporary) || !strings.Contains(err.Error(), "after 5 attempts") || f.count("GET /v1/skills/") != 5 {
			t.Fatalf("err = %v after %d requests", err, f.count("GET /v1/skills/"))
		}
		if got := names(t, work); len(got) != 0 {
			t.Fatalf("workdir %v", got)
		}
	})
	t.Run("a download that ends short", func(t *testing.T) {
		f := newFake(t)
		f.addSkill(skillA, "1", "p", "p", archive, 1).archive = archive[:len(archive)/2]
		_, _, err := StageSkills(context.Background(), f.workClient(t), t.TempDir(), pins, fast)
		var temporary *SkillRetrievalError
		if !errors.As(err, &temporary) || !strings.Contains(err.Error(), "ended after") || f.count("GET /v1/skills/"+skillA+"/versions/1/content") != 5 {
			t.Fatalf("err = %v after %d downloads", err, f.count("GET /v1/skills/"+skillA+"/versions/1/content"))
		}
	})
	t.Run("a refused Work token (401) at once", func(t *testing.T) {
		f := newFake(t)
		f.addSkill(skillA, "1", "p", "p", archive, 1)
		f.skillErrs = []int{401}
		_, _, err := StageSkills(context.Background(), f.workClient(t), t.TempDir(), pins, fast)
		var temporary *SkillRetrievalError
		if !errors.As(err, &temporary) || !strings.Contains(err.Error(), "refused (401)") || f.count("GET /v1/skills/") != 1 {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a cancelled context is neither class", func(t *testing.T) {
		f := newFake(t)
		f.addSkill(skillA, "1", "p", "p", archive, 1)
		f.skillErrs = []int{503, 503, 503, 503, 503}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		_, _, err := StageSkills(ctx, f.workClient(t), t.TempDir(), pins, &StageSkillsOptions{BackoffBase: time.Second})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestSessionSkillPinsReadsPrimaryAndFrozenRosterPins(t *testing.T) {
	pins, err := SessionSkillPins([]byte(`{"id":"sesn_x","agent":{"id":"agent_self","skills":[{"type":"custom","skill_id":"` + skillA + `","version":"3"}],
		"multiagent":{"type":"coordinator","agents":[
			{"type":"agent","id":"` + rosterA + `","version":1,"skills":[{"type":"custom","skill_id":"` + skillB + `","version":2}]},
			{"type":"agent","id":"agent_self","skills":[{"type":"custom","skill_id":"` + skillB + `","version":"9"}]},
			{"type":"self"},
			{"type":"agent","id":"agent_noskills"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []SkillPin{{SkillID: skillA, Version: "3"}, {SkillID: skillB, Version: "2", AgentID: rosterA}}
	if !slices.Equal(pins, want) {
		t.Fatalf("pins %+v, want %+v", pins, want)
	}
}

// skillSession is a Session body pinning skillA version 1 (and, with roster, skillB for rosterA).
func skillSession(roster bool) string {
	agent := map[string]any{"id": "agent_primary", "skills": []any{map[string]any{"type": "custom", "skill_id": skillA, "version": "1"}}}
	if roster {
		agent["multiagent"] = map[string]any{"type": "coordinator", "agents": []any{map[string]any{
			"type": "agent", "id": rosterA, "version": 1, "skills": []any{map[string]any{"type": "custom", "skill_id": skillB, "version": "1"}}}}}
	}
	b, _ := json.Marshal(map[string]any{"id": sessID, "type": "session", "agent": agent})
	return string(b)
}

func TestSessionItemStagesSkillsBeforeToolsRunAndRemovesThemAfter(t *testing.T) {
	f := newFake(t)
	f.session = skillSession(true)
	f.addSkill(skillA, "1", "pdf", "pdf", tarGz(t, member{path: "pdf/SKILL.md", body: md("pdf")}), 1)
	f.addSkill(skillB, "1", "xlsx", "xlsx", tarGz(t, member{path: "xlsx/SKILL.md", body: md("xlsx")}), 1)
	f.history = []map[string]any{{"id": "sevt_1", "type": "user.message", "seq": 1}}
	work := t.TempDir()
	_ = os.MkdirAll(filepath.Join(work, "skills", "stale"), 0o755)
	bash := ToolFunc{ToolName: "bash", Fn: func(context.Context, map[string]any) (string, error) {
		a, err := os.ReadFile(filepath.Join(work, "skills", "pdf", "SKILL.md"))
		if err != nil {
			return "", err
		}
		b, err := os.ReadFile(filepath.Join(work, "skills", ".agents", rosterA, "xlsx", "SKILL.md"))
		if err != nil {
			return "", err
		}
		_, stale := os.Stat(filepath.Join(work, "skills", "stale"))
		return fmt.Sprintf("%s%s%v", a, b, stale != nil), nil
	}}
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Tools: []Tool{bash}, Workdir: work, LeaseTTL: 3 * time.Second, MaxIdle: 1500 * time.Millisecond}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	go func() {
		time.Sleep(300 * time.Millisecond)
		f.stream <- map[string]any{"seq": 2, "id": "sevt_2", "type": "agent.tool_use", "name": "bash", "input": map[string]any{"command": "cat skills/pdf/SKILL.md"}, "evaluated_permission": "allow"}
		time.Sleep(300 * time.Millisecond)
		f.stream <- map[string]any{"seq": 3, "id": "sevt_3", "type": "session.status_idle", "stop_reason": map[string]any{"type": "end_turn"}}
		f.endIdle()
	}()
	if err := handle(w, item); err != nil {
		t.Fatal(err)
	}
	s := f.snapshot()
	if len(s.posted) != 1 || s.posted[0]["is_error"] != false {
		t.Fatalf("posted %v", s.posted)
	}
	if text := s.posted[0]["content"].([]any)[0].(map[string]any)["text"]; text != md("pdf")+md("xlsx")+"true" {
		t.Fatalf("the tool saw %q", text)
	}
	if len(s.fails) != 0 || len(s.stops) != 1 {
		t.Fatalf("fails %v stops %v", s.fails, s.stops)
	}
	if got := names(t, work); len(got) != 0 {
		t.Fatalf("the tree is removed when the item ends: %v", got)
	}
	// The staging read the Session and the Skills with the Work token, after the first heartbeat.
	first := slices.IndexFunc(s.log, func(l string) bool { return strings.Contains(l, "/heartbeat") })
	read := slices.IndexFunc(s.log, func(l string) bool { return strings.HasPrefix(l, "GET /v1/skills/") })
	if first < 0 || read < first {
		t.Fatalf("log %v", s.log)
	}
	for i, l := range s.log {
		if (strings.HasPrefix(l, "GET /v1/skills/") || strings.HasPrefix(l, "GET /v1/sessions/")) && s.auth[i] != "Bearer mango_wt_token" {
			t.Fatalf("%s used %q", l, s.auth[i])
		}
	}
}

func noToolMayRun(t *testing.T) Tool {
	return ToolFunc{ToolName: "bash", Fn: func(context.Context, map[string]any) (string, error) {
		t.Error("a tool ran")
		return "", nil
	}}
}

func TestSessionItemWithAPermanentSkillFailureFailsTheWorkAndRunsNothing(t *testing.T) {
	f := newFake(t)
	f.session = skillSession(false)
	s := f.addSkill(skillA, "1", "pdf", "pdf", tarGz(t, member{path: "pdf/SKILL.md", body: md("pdf")}), 1)
	s.archive = bytes.Repeat([]byte{'x'}, len(s.archive))
	f.stream <- map[string]any{"seq": 1, "id": "sevt_1", "type": "agent.tool_use", "name": "bash", "input": map[string]any{}, "evaluated_permission": "allow"}
	work := t.TempDir()
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Tools: []Tool{noToolMayRun(t)}, Workdir: work, LeaseTTL: 3 * time.Second}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	err := w.HandleItem(context.Background(), item, nil)
	var permanent *SkillStagingError
	if !errors.As(err, &permanent) {
		t.Fatalf("err = %v", err)
	}
	snap := f.snapshot()
	if len(snap.fails) != 1 || !strings.Contains(fmt.Sprint(snap.fails[0]["message"]), "does not match its SHA-256") {
		t.Fatalf("fails %v", snap.fails)
	}
	if len(snap.stops) != 0 || len(snap.posted) != 0 {
		t.Fatalf("stops %v posted %v", snap.stops, snap.posted)
	}
	for i, l := range snap.log {
		if strings.Contains(l, "/events") {
			t.Fatalf("the tool runner started: %s", l)
		}
		if strings.Contains(l, "/fail") && snap.auth[i] != "Bearer mango_wt_token" {
			t.Fatalf("Fail used %q", snap.auth[i])
		}
	}
	if got := names(t, work); len(got) != 0 {
		t.Fatalf("workdir %v", got)
	}
}

func TestSessionItemWithATemporarySkillFailureLeavesTheLeaseToExpire(t *testing.T) {
	defer func(base time.Duration) { skillRetryBase = base }(skillRetryBase)
	skillRetryBase = time.Millisecond
	f := newFake(t)
	f.session = skillSession(false)
	f.addSkill(skillA, "1", "pdf", "pdf", tarGz(t, member{path: "pdf/SKILL.md", body: md("pdf")}), 1)
	f.skillErrs = []int{503, 502, 503, 504, 503, 503}
	work := t.TempDir()
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Tools: []Tool{noToolMayRun(t)}, Workdir: work, LeaseTTL: 3 * time.Second}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	err := w.HandleItem(context.Background(), item, nil)
	var temporary *SkillRetrievalError
	if !errors.As(err, &temporary) || !strings.Contains(err.Error(), "after 5 attempts") {
		t.Fatalf("err = %v", err)
	}
	snap := f.snapshot()
	if len(snap.fails) != 0 || len(snap.stops) != 0 || len(snap.posted) != 0 {
		t.Fatalf("fails %v stops %v posted %v", snap.fails, snap.stops, snap.posted)
	}
	if n := f.count("GET /v1/skills/"); n != 5 {
		t.Fatalf("%d Skills requests, want 5", n)
	}
	if got := names(t, work); len(got) != 0 {
		t.Fatalf("workdir %v", got)
	}
}

func TestSessionItemWithPinsButNoWorkdirIsAnErrorWithoutFail(t *testing.T) {
	f := newFake(t)
	f.session = skillSession(false)
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Tools: []Tool{noToolMayRun(t)}, LeaseTTL: 3 * time.Second}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	err := w.HandleItem(context.Background(), item, nil)
	if err == nil || !strings.Contains(err.Error(), "Workdir is not set") {
		t.Fatalf("err = %v", err)
	}
	if s := f.snapshot(); len(s.fails) != 0 || len(s.stops) != 0 || f.count("GET /v1/skills/") != 0 {
		t.Fatalf("fails %v stops %v", s.fails, s.stops)
	}
}

func TestSessionItemWithoutPinsRemovesALeftoverTree(t *testing.T) {
	f := newFake(t)
	f.session = fmt.Sprintf(`{"id":%q,"type":"session","agent":{"skills":[]}}`, sessID)
	f.heartbeats = []int{200, 299} // stopping: the item ends with a forced Stop
	work := t.TempDir()
	_ = os.MkdirAll(filepath.Join(work, "skills", "old"), 0o755)
	_ = os.MkdirAll(filepath.Join(work, ".skills-staging-feedfacefeedface"), 0o700)
	_ = os.WriteFile(filepath.Join(work, "keep.txt"), nil, 0o644)
	w := &EnvironmentWorker{Client: f.client(t), EnvironmentID: envID, Workdir: work, LeaseTTL: 3 * time.Second}
	item := Item{WorkID: workID, EnvironmentID: envID, Type: TypeSession, SessionID: sessID, Secret: f.secret()}
	if err := handle(w, item); err != nil {
		t.Fatal(err)
	}
	if got := names(t, work); !slices.Equal(got, []string{"keep.txt"}) {
		t.Fatalf("workdir %v", got)
	}
	if s := f.snapshot(); len(s.stops) != 1 || len(s.fails) != 0 {
		t.Fatalf("stops %v fails %v", s.stops, s.fails)
	}
}

// unreachableClient is a client of a loopback port nothing listens on (connections are refused), with no
// retries of its own.
func unreachableClient(t *testing.T) *mango.Client {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	c, err := mango.New("http://"+addr, "x", mango.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
