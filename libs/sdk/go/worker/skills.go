package worker

// Skill staging: the Go port of libs/worker-runtime/src/skills (the Docker supervisor's item runner).
// Seed 002, Environment Work: before the tool runner starts, the worker reads the frozen Session with
// the Work token and stages every primary and roster Agent Skill pin below <workdir>/skills as one fresh
// tree that atomically replaces the prior one.

import (
	"archive/tar"
	"compress/gzip"
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"mango.dev/sdk/mango"
)

// SkillLimits are the Session-wide bounds of Skill staging. A zero field means its DefaultSkillLimits value.
type SkillLimits struct {
	// Pins is the number of unique (Agent, Skill, version) pins.
	Pins int
	// CompressedBytes bounds the archives' total length; ExpandedBytes their members' total size.
	CompressedBytes, ExpandedBytes int64
	// Files bounds the total number of regular files.
	Files int
}

// DefaultSkillLimits are the limits of docs/api-guide.md, Skills: 500 unique pins, 500 MiB compressed
// and (separately) expanded bytes, 10,000 files.
var DefaultSkillLimits = SkillLimits{Pins: 500, CompressedBytes: 500 << 20, ExpandedBytes: 500 << 20, Files: 10_000}

// SkillAttempts is how many times a request of staging is tried before a temporary failure is given up.
const SkillAttempts = 5

// SkillPin is one frozen pin of a Session: a Skill version of the primary Agent, or of a roster Agent.
type SkillPin struct {
	SkillID string
	// Version is a frozen version number ("1", "2", …), never "latest".
	Version string
	// AgentID marks a roster Agent's pin: it is staged below skills/.agents/<AgentID>/ instead of skills/.
	AgentID string
}

// StagedSkill is one staged pin.
type StagedSkill struct {
	SkillID, Version, AgentID string
	Name                      string
	// Path is relative to the workdir, e.g. skills/pdf-tools or skills/.agents/agent_…/pdf-tools.
	Path  string
	Files int
	Bytes int64
}

// SkillStagingError is a permanent validation failure of the Session's immutable Skill input (a pin that
// no longer exists, an archive whose length or digest differs from the frozen version, an unsafe or
// non-regular member, a Session-wide limit): the worker reports it with Work Fail (the Session terminates).
type SkillStagingError struct{ Message string }

func (e *SkillStagingError) Error() string { return e.Message }

// SkillRetrievalError is a temporary retrieval failure (network, 5xx, 429, a cut-off download, a refused
// Work token) that persisted through the retries: the worker neither Fails nor Stops, so the lease
// expires and queue reclaim retries the same activation.
type SkillRetrievalError struct{ Message string }

func (e *SkillRetrievalError) Error() string { return e.Message }

// StageSkillsOptions tunes StageSkills (nil: the defaults).
type StageSkillsOptions struct {
	// Attempts per request before a temporary failure is given up (0: SkillAttempts).
	Attempts int
	// Limits overrides DefaultSkillLimits field by field.
	Limits SkillLimits
	// BackoffBase is the base delay of the jittered exponential backoff between attempts (0: 250 ms;
	// capped at 8 s).
	BackoffBase time.Duration
}

const (
	skillsDir          = "skills"
	skillStagingPrefix = ".skills-staging-"
	skillPathBytes     = 1024
	skillSegmentBytes  = 255
	skillBackoffMax    = 8 * time.Second
	maxSafeInteger     = 1<<53 - 1
)

var (
	skillIDPattern   = regexp.MustCompile(`^skill_[0-9A-HJKMNP-TV-Z]{26}$`)
	agentIDPattern   = regexp.MustCompile(`^agent_[0-9A-HJKMNP-TV-Z]{26}$`)
	versionPattern   = regexp.MustCompile(`^[1-9][0-9]{0,15}$`)
	sha256Pattern    = regexp.MustCompile(`^[0-9a-f]{64}$`)
	skillNamePattern = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
	drivePattern     = regexp.MustCompile(`^[A-Za-z]:`)
)

// skillVersion is the metadata of a pinned version that staging needs (checked by checkSkillMeta).
type skillVersion struct {
	name, directory           string
	archiveSize, expandedSize int64
	archiveSHA256             string
	fileCount                 int64
}

// StageSkills stages pins below root (the canonical workdir): it resolves every pin's metadata with
// client (the Work token; give it mango.WithMaxRetries(0), staging retries itself), checks the
// Session-wide limits, downloads each archive into a private staging directory below root verifying its
// exact compressed length and SHA-256, then extracts it accepting only regular files and directories at
// safe paths below the version's directory (the limits are enforced again on the actual members). Only
// when everything verified does the fresh tree replace <root>/skills (renames: the prior tree, or
// whatever a tool left there — a symlink included — is moved aside unfollowed and removed). Permanent
// problems return *SkillStagingError, temporary ones (after the retries) *SkillRetrievalError; either
// way nothing of the new tree remains. It returns <root>/skills and what was staged.
func StageSkills(ctx context.Context, client *mango.Client, root string, pins []SkillPin, opts *StageSkillsOptions) (string, []StagedSkill, error) {
	o := resolveStageOptions(opts)
	root, err := canonicalDir(root)
	if err != nil {
		return "", nil, err
	}
	unique, err := uniqueSkillPins(pins)
	if err != nil {
		return "", nil, err
	}
	if len(unique) > o.Limits.Pins {
		return "", nil, &SkillStagingError{fmt.Sprintf("the Session pins %d Skill versions; at most %d can be staged", len(unique), o.Limits.Pins)}
	}
	if err := removeSkillLeftovers(root); err != nil {
		return "", nil, err
	}
	staging, err := mkdtempIn(root)
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(staging) // never follows a symlink

	metas := make([]skillVersion, len(unique))
	for i, pin := range unique {
		metas[i], err = withSkillRetries(ctx, o, "metadata of "+pinLabel(pin), func() (skillVersion, error) {
			return getSkillVersion(ctx, client, pin)
		})
		if err != nil {
			return "", nil, err
		}
	}
	var compressed, expanded, files int64
	for _, m := range metas {
		compressed, expanded, files = compressed+m.archiveSize, expanded+m.expandedSize, files+m.fileCount
	}
	switch {
	case compressed > o.Limits.CompressedBytes:
		return "", nil, &SkillStagingError{fmt.Sprintf("the Session's Skills have more than %d compressed bytes", o.Limits.CompressedBytes)}
	case expanded > o.Limits.ExpandedBytes:
		return "", nil, &SkillStagingError{fmt.Sprintf("the Session's Skills have more than %d expanded bytes", o.Limits.ExpandedBytes)}
	case files > int64(o.Limits.Files):
		return "", nil, &SkillStagingError{fmt.Sprintf("the Session's Skills have more than %d files", o.Limits.Files)}
	}

	tree := filepath.Join(staging, "tree")
	if err := os.Mkdir(tree, 0o755); err != nil {
		return "", nil, err
	}
	budget := &skillBudget{limits: o.Limits}
	taken := map[string]bool{}
	staged := make([]StagedSkill, 0, len(unique))
	for i, pin := range unique {
		meta := metas[i]
		rel := meta.name
		if pin.AgentID != "" {
			rel = filepath.Join(".agents", pin.AgentID, meta.name)
		}
		if taken[rel] {
			return "", nil, &SkillStagingError{fmt.Sprintf("two pinned Skills are both named %q (%s)", meta.name, pinLabel(pin))}
		}
		taken[rel] = true
		archive := filepath.Join(staging, fmt.Sprintf("archive-%d.tar.gz", i))
		if _, err := withSkillRetries(ctx, o, "archive of "+pinLabel(pin), func() (struct{}, error) {
			return struct{}{}, downloadSkill(ctx, client, pin, meta, archive)
		}); err != nil {
			return "", nil, err
		}
		beforeFiles, beforeBytes := budget.files, budget.bytes
		if err := extractSkill(archive, meta, filepath.Join(tree, rel), budget, pin); err != nil {
			return "", nil, err
		}
		_ = os.Remove(archive)
		staged = append(staged, StagedSkill{
			SkillID: pin.SkillID, Version: pin.Version, AgentID: pin.AgentID, Name: meta.name,
			Path: filepath.ToSlash(filepath.Join(skillsDir, rel)), Files: budget.files - beforeFiles, Bytes: budget.bytes - beforeBytes,
		})
	}
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	target := filepath.Join(root, skillsDir)
	if err := os.Rename(target, filepath.Join(staging, "previous")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", nil, err
	}
	if err := os.Rename(tree, target); err != nil {
		return "", nil, err
	}
	return target, staged, nil
}

// RemoveStagedSkills removes the staged tree <root>/skills (when the Work ends) and any staging leftovers
// of a crashed run. Nothing is followed: a symlink is removed, not its target.
func RemoveStagedSkills(root string) error {
	dir, err := canonicalDir(root)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(dir, skillsDir)); err != nil {
		return err
	}
	return removeSkillLeftovers(dir)
}

// SessionSkillPins are the frozen pins of a Session as the Work token reads it (GET /v1/sessions/{id}):
// the primary Agent's agent.skills, then each roster Agent's skills from agent.multiagent.agents[]
// (staged below skills/.agents/<agent_id>/). Versions are not checked here (StageSkills does).
func SessionSkillPins(session []byte) ([]SkillPin, error) {
	var s struct {
		Agent struct {
			ID         string    `json:"id"`
			Skills     []pinJSON `json:"skills"`
			Multiagent *struct {
				Agents []struct {
					Type   string     `json:"type"`
					ID     string     `json:"id"`
					Skills *[]pinJSON `json:"skills"`
				} `json:"agents"`
			} `json:"multiagent"`
		} `json:"agent"`
	}
	if err := json.Unmarshal(session, &s); err != nil {
		return nil, fmt.Errorf("worker: the Session is not readable: %w", err)
	}
	var pins []SkillPin
	for _, p := range s.Agent.Skills {
		pins = append(pins, SkillPin{SkillID: string(p.SkillID), Version: string(p.Version)})
	}
	if s.Agent.Multiagent != nil {
		for _, a := range s.Agent.Multiagent.Agents {
			if a.Type != "agent" || a.ID == "" || a.ID == s.Agent.ID || a.Skills == nil {
				continue
			}
			for _, p := range *a.Skills {
				pins = append(pins, SkillPin{SkillID: string(p.SkillID), Version: string(p.Version), AgentID: a.ID})
			}
		}
	}
	return pins, nil
}

type pinJSON struct {
	SkillID looseString `json:"skill_id"`
	Version looseString `json:"version"`
}

// looseString is a JSON string, or the JSON text of any other value (a number version becomes "1"; a
// malformed id stays malformed and is refused by StageSkills as a permanent error).
type looseString string

func (s *looseString) UnmarshalJSON(b []byte) error {
	var str string
	if json.Unmarshal(b, &str) == nil {
		*s = looseString(str)
	} else {
		*s = looseString(b)
	}
	return nil
}

func resolveStageOptions(opts *StageSkillsOptions) StageSkillsOptions {
	var o StageSkillsOptions
	if opts != nil {
		o = *opts
	}
	if o.Attempts <= 0 {
		o.Attempts = SkillAttempts
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = 250 * time.Millisecond
	}
	d := DefaultSkillLimits
	if o.Limits.Pins <= 0 {
		o.Limits.Pins = d.Pins
	}
	if o.Limits.CompressedBytes <= 0 {
		o.Limits.CompressedBytes = d.CompressedBytes
	}
	if o.Limits.ExpandedBytes <= 0 {
		o.Limits.ExpandedBytes = d.ExpandedBytes
	}
	if o.Limits.Files <= 0 {
		o.Limits.Files = d.Files
	}
	return o
}

// canonicalDir is the absolute path of root with its symlinks resolved (staging works below the real
// directory, so renames stay on one filesystem and a later symlink swap of root changes nothing).
func canonicalDir(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

func pinLabel(p SkillPin) string {
	s := p.SkillID + " version " + p.Version
	if p.AgentID != "" {
		s += " (agent " + p.AgentID + ")"
	}
	return s
}

func uniqueSkillPins(pins []SkillPin) ([]SkillPin, error) {
	seen := map[string]bool{}
	var out []SkillPin
	for _, p := range pins {
		if !skillIDPattern.MatchString(p.SkillID) {
			return nil, &SkillStagingError{fmt.Sprintf("%q is not a Skill id", p.SkillID)}
		}
		if !versionPattern.MatchString(p.Version) {
			return nil, &SkillStagingError{fmt.Sprintf("%s is pinned to %q, not a frozen version number", p.SkillID, p.Version)}
		}
		if p.AgentID != "" && !agentIDPattern.MatchString(p.AgentID) {
			return nil, &SkillStagingError{fmt.Sprintf("%q is not an Agent id", p.AgentID)}
		}
		key := p.AgentID + "/" + p.SkillID + "/" + p.Version
		if !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	return out, nil
}

// getSkillVersion is GET /v1/skills/{skill_id}/versions/{version} with the Work token, checked.
func getSkillVersion(ctx context.Context, client *mango.Client, pin SkillPin) (skillVersion, error) {
	raw, err := mango.Decode[json.RawMessage](client.SkillsVersionsRetrieve(ctx, pin.SkillID, pin.Version))
	if err != nil {
		return skillVersion{}, err
	}
	return checkSkillMeta(pin, *raw)
}

func checkSkillMeta(pin SkillPin, raw []byte) (skillVersion, error) {
	invalid := &SkillStagingError{fmt.Sprintf("the metadata of %s is not a valid Skill version", pinLabel(pin))}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return skillVersion{}, invalid
	}
	text := func(k string) (string, bool) { s, ok := m[k].(string); return s, ok }
	integer := func(k string) (int64, bool) {
		n, ok := m[k].(json.Number)
		if !ok {
			return 0, false
		}
		v, err := strconv.ParseInt(string(n), 10, 64)
		return v, err == nil && v >= 0 && v <= maxSafeInteger
	}
	var v skillVersion
	var ok [9]bool
	var skillID, version string
	skillID, ok[0] = text("skill_id")
	switch ver := m["version"].(type) {
	case string:
		version, ok[1] = ver, true
	case json.Number:
		version, ok[1] = ver.String(), true
	}
	v.name, ok[2] = text("name")
	v.directory, ok[3] = text("directory")
	v.archiveSHA256, ok[4] = text("archive_sha256")
	v.archiveSize, ok[5] = integer("archive_size_bytes")
	v.expandedSize, ok[6] = integer("expanded_size_bytes")
	v.fileCount, ok[7] = integer("file_count")
	ok[8] = skillID == pin.SkillID && version == pin.Version &&
		len(v.name) <= 64 && skillNamePattern.MatchString(v.name) &&
		unsafeSkillPath(v.directory+"/x") == "" && sha256Pattern.MatchString(v.archiveSHA256)
	for _, good := range ok {
		if !good {
			return skillVersion{}, invalid
		}
	}
	return v, nil
}

// unsafeSkillPath is why path is not a safe member path of a Skill bundle, or "" when it is
// (libs/domain/kernel skill-paths.ts): relative (top/…, at least two segments), '/'-separated, valid
// UTF-8, no empty, "." or ".." segment, no backslash, no control character (NUL included), at most 1024
// bytes and 255 bytes per segment.
func unsafeSkillPath(path string) string {
	if path == "" {
		return "the path is empty"
	}
	if !utf8.ValidString(path) {
		return "the path is not valid UTF-8"
	}
	for _, r := range path {
		if r <= 0x1f || (r >= 0x7f && r <= 0x9f) {
			return "the path contains a control character"
		}
	}
	switch {
	case strings.Contains(path, `\`):
		return "the path contains a backslash"
	case strings.HasPrefix(path, "/"):
		return "the path is absolute"
	case drivePattern.MatchString(path):
		return "the path starts with a drive letter"
	case len(path) > skillPathBytes:
		return fmt.Sprintf("the path is longer than %d bytes", skillPathBytes)
	}
	segments := strings.Split(path, "/")
	for _, s := range segments {
		switch {
		case s == "":
			return "the path has an empty segment"
		case s == "." || s == "..":
			return fmt.Sprintf("the path has a %q segment", s)
		case len(s) > skillSegmentBytes:
			return fmt.Sprintf("a path segment is longer than %d bytes", skillSegmentBytes)
		}
	}
	if len(segments) < 2 {
		return "the path is not inside the bundle's top-level directory"
	}
	return ""
}

// skillTemporary reports a failure that may pass: a retrieval failure, no response, or 408, 429, 5xx.
func skillTemporary(err error) bool {
	var retrieval *SkillRetrievalError
	return errors.As(err, &retrieval) || transient(err)
}

// withSkillRetries tries call up to o.Attempts times while it fails temporarily (jittered backoff) and
// maps the outcome to the two error classes: a refused token (401, 403) is temporary (the lease is gone
// or going: reclaim decides), a 404 permanent (deleted, or not pinned by this Session).
func withSkillRetries[T any](ctx context.Context, o StageSkillsOptions, what string, call func() (T, error)) (T, error) {
	var zero T
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		v, err := call()
		if err == nil {
			return v, nil
		}
		if ctx.Err() != nil {
			return zero, ctx.Err()
		}
		var permanent *SkillStagingError
		if errors.As(err, &permanent) {
			return zero, err
		}
		var apiErr *mango.Error
		if errors.As(err, &apiErr) {
			switch apiErr.Status {
			case 401, 403:
				return zero, &SkillRetrievalError{fmt.Sprintf("%s: the Work token was refused (%d)", what, apiErr.Status)}
			case 404:
				return zero, &SkillStagingError{what + ": not found (deleted, or not pinned by this Session)"}
			}
		}
		if !skillTemporary(err) {
			return zero, &SkillStagingError{what + ": " + err.Error()}
		}
		if attempt >= o.Attempts {
			return zero, &SkillRetrievalError{fmt.Sprintf("%s: %v (after %d attempts)", what, err, o.Attempts)}
		}
		if err := sleepCtx(ctx, skillBackoff(attempt-1, o.BackoffBase)); err != nil {
			return zero, err
		}
	}
}

// skillBackoff is base·2^attempt capped at 8 s, with ±25 % jitter.
func skillBackoff(attempt int, base time.Duration) time.Duration {
	d := min(skillBackoffMax, base<<min(attempt, 20))
	return time.Duration(float64(d) * (0.75 + rand.Float64()*0.5))
}

// downloadSkill writes the archive to file, verifying it is exactly the frozen length and SHA-256: a
// longer stream or a different digest is permanent; a stream that ends short or breaks is temporary.
func downloadSkill(ctx context.Context, client *mango.Client, pin SkillPin, meta skillVersion, file string) error {
	res, err := client.Skills.Versions.Content(ctx, pin.SkillID, pin.Version)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	out, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return &SkillRetrievalError{fmt.Sprintf("downloading %s failed: %v", pinLabel(pin), err)}
	}
	hash := sha256.New()
	n, copyErr := io.Copy(io.MultiWriter(out, hash), io.LimitReader(res.Body, meta.archiveSize+1))
	closeErr := out.Close()
	switch {
	case n > meta.archiveSize:
		return &SkillStagingError{fmt.Sprintf("the archive of %s is longer than its %d bytes", pinLabel(pin), meta.archiveSize)}
	case copyErr != nil && ctx.Err() != nil:
		return ctx.Err()
	case copyErr != nil:
		return &SkillRetrievalError{fmt.Sprintf("downloading %s failed: %v", pinLabel(pin), copyErr)}
	case closeErr != nil:
		return &SkillRetrievalError{fmt.Sprintf("downloading %s failed: %v", pinLabel(pin), closeErr)}
	case n < meta.archiveSize:
		return &SkillRetrievalError{fmt.Sprintf("the archive of %s ended after %d of %d bytes", pinLabel(pin), n, meta.archiveSize)}
	case hex.EncodeToString(hash.Sum(nil)) != meta.archiveSHA256:
		return &SkillStagingError{fmt.Sprintf("the archive of %s does not match its SHA-256", pinLabel(pin))}
	}
	return nil
}

type skillBudget struct {
	bytes  int64
	files  int
	limits SkillLimits
}

// tarTypeNames name the member types as the TypeScript runner's errors do (node-tar's names).
var tarTypeNames = map[byte]string{
	tar.TypeLink: "Link", tar.TypeSymlink: "SymbolicLink", tar.TypeChar: "CharacterDevice",
	tar.TypeBlock: "BlockDevice", tar.TypeFifo: "FIFO", tar.TypeCont: "ContiguousFile",
	tar.TypeGNUSparse: "SparseFile",
}

func tarTypeName(t byte) string {
	if n, ok := tarTypeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("type %q", t)
}

// clip is s cut to 200 bytes and quoted, for an error message.
func clip(s string) string { return strconv.Quote(truncate(s, 200)) }

// extractSkill extracts a verified gzip tar into dest (which must not exist): only regular files and
// directories, each at a safe path below the version's directory (which is stripped). The Session-wide
// budget counts actual member bytes and files. The staging tree is private and only ever gets files and
// directories created here (files exclusively), so nothing in it can redirect a write.
func extractSkill(archive string, meta skillVersion, dest string, budget *skillBudget, pin SkillPin) error {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	invalid := func(err error) error {
		return &SkillStagingError{fmt.Sprintf("the archive of %s is not a valid gzip tar: %v", pinLabel(pin), err)}
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		return invalid(err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return invalid(err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue // a PAX global header: metadata, not a member
		}
		raw := strings.TrimRight(h.Name, "/")
		isDir := h.Typeflag == tar.TypeDir
		check := raw
		if isDir {
			check = raw + "/x"
		}
		if why := unsafeSkillPath(check); why != "" {
			return &SkillStagingError{fmt.Sprintf("%s has an unsafe member %s: %s", pinLabel(pin), clip(h.Name), why)}
		}
		segments := strings.Split(raw, "/")
		if segments[0] != meta.directory {
			return &SkillStagingError{fmt.Sprintf("%s has a member outside %q: %s", pinLabel(pin), meta.directory+"/", clip(raw))}
		}
		target := filepath.Join(append([]string{dest}, segments[1:]...)...)
		bothKinds := &SkillStagingError{fmt.Sprintf("%s uses %s as both a file and a directory", pinLabel(pin), clip(h.Name))}
		if isDir {
			if err := os.MkdirAll(target, 0o755); err != nil {
				if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
					return bothKinds
				}
				return err
			}
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return &SkillStagingError{fmt.Sprintf("%s has a %s member %s: only regular files are allowed", pinLabel(pin), tarTypeName(h.Typeflag), clip(raw))}
		}
		budget.files++
		budget.bytes += h.Size
		if budget.files > budget.limits.Files {
			return &SkillStagingError{fmt.Sprintf("the Session's Skills have more than %d files", budget.limits.Files)}
		}
		if budget.bytes > budget.limits.ExpandedBytes {
			return &SkillStagingError{fmt.Sprintf("the Session's Skills have more than %d expanded bytes", budget.limits.ExpandedBytes)}
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
				return bothKinds
			}
			return err
		}
		mode := os.FileMode(0o644)
		if h.Mode&0o111 != 0 {
			mode = 0o755
		}
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTDIR) {
				return &SkillStagingError{fmt.Sprintf("%s has the member %s twice or as both a file and a directory", pinLabel(pin), clip(raw))}
			}
			return err
		}
		_, copyErr := io.Copy(out, tr)
		closeErr := out.Close()
		if copyErr != nil {
			var pathErr *fs.PathError
			if errors.As(copyErr, &pathErr) {
				return copyErr // the write side (e.g. a full disk), not the archive
			}
			return invalid(copyErr)
		}
		if closeErr != nil {
			return closeErr
		}
	}
}

func mkdtempIn(root string) (string, error) {
	b := make([]byte, 8)
	if _, err := crand.Read(b); err != nil {
		return "", err
	}
	dir := filepath.Join(root, skillStagingPrefix+hex.EncodeToString(b))
	return dir, os.Mkdir(dir, 0o700)
}

// removeSkillLeftovers removes staging directories of a run that died (never followed).
func removeSkillLeftovers(root string) error {
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), skillStagingPrefix) {
			if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
