// gomodproxy writes one version of a Go module as a GOPROXY directory (the module proxy protocol's files,
// `go help goproxy`): <out>/<escaped module path>/@v/{list, <version>.info, <version>.mod, <version>.zip}.
// The zip is made by golang.org/x/mod/zip, the code the go command uses, and checked the same way, so it
// is the zip a module proxy would serve for the tag. `GOPROXY=file://<out>` (or the directory served over
// HTTPS) lets `go get <module>@<version>` install it with no code host (tools/release/sdks.sh, docs/versioning.md).
//
//	gomodproxy -dir libs/sdk/go -version v1.2.3 -time 2026-12-07T19:00:00Z -out dist/release/1.2.3/go
//
// Prints the module zip's path.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

func main() {
	dir := flag.String("dir", "", "the module's directory (holds go.mod)")
	version := flag.String("version", "", "the module version, vX.Y.Z[-pre]")
	stamp := flag.String("time", "", "the version's time, RFC 3339 (the commit's; the .info file)")
	out := flag.String("out", "", "the GOPROXY directory to write into")
	flag.Parse()
	if err := run(*dir, *version, *stamp, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gomodproxy:", err)
		os.Exit(1)
	}
}

func run(dir, version, stamp, out string) error {
	if dir == "" || version == "" || stamp == "" || out == "" {
		return fmt.Errorf("usage: gomodproxy -dir DIR -version vX.Y.Z -time RFC3339 -out DIR")
	}
	at, err := time.Parse(time.RFC3339, stamp)
	if err != nil {
		return fmt.Errorf("-time: %w", err)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return fmt.Errorf("%s/go.mod names no module", dir)
	}
	if semver.Canonical(version) != version {
		return fmt.Errorf("%q is not a canonical semantic version (vX.Y.Z)", version)
	}
	// The major version must agree with the path (a v2 module is <path>/v2).
	mv := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return err
	}
	escaped, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	vdir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	zipPath := filepath.Join(vdir, version+".zip")
	f, err := os.Create(zipPath)
	if err != nil {
		return err
	}
	if err := modzip.CreateFromDir(f, mv, dir); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// What `go mod download` checks before it extracts: the same rules, applied to the written file.
	if _, err := modzip.CheckZip(mv, zipPath); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, version+".mod"), gomod, 0o644); err != nil {
		return err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    string
	}{version, at.UTC().Format(time.RFC3339)})
	if err := os.WriteFile(filepath.Join(vdir, version+".info"), append(info, '\n'), 0o644); err != nil {
		return err
	}
	listPath := filepath.Join(vdir, "list")
	old, err := os.ReadFile(listPath)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	versions := strings.Fields(string(old))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	semver.Sort(versions)
	if err := os.WriteFile(listPath, []byte(strings.Join(versions, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Println(zipPath)
	return nil
}
