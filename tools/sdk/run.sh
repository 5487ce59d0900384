#!/usr/bin/env bash
# tools/sdk/run.sh <target> — the Nx targets of the Python and Go SDKs (libs/sdk/{python,go}/project.json)
# and the live runs started by tools/sdk/test/*.e2e-spec.ts. Installs the toolchains on first use
# (tools/sdk/ensure-tools.sh). Test targets also write a Jest-style summary to tmp/test-results/<project>.json
# (or $SDK_REPORT) for tools/ci/summarize-tests.js.
#   python-lint | python-typecheck | python-test | python-live
#   go-lint     | go-typecheck     | go-test     | go-live
#   python-wheel <out dir>   builds the mango-sdk wheel into <out dir> and prints its path
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
. tools/sdk/ensure-tools.sh
export PYTHONDONTWRITEBYTECODE=1
target=${1:?usage: tools/sdk/run.sh <target>}
ruff=$SDK_CACHE/venv/bin/ruff
report() { # report junit|gotest <input> <default report>
  node tools/sdk/test-report.js "$1" "$2" "${SDK_REPORT:-$3}"
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

case "$target" in
  python-lint)
    "$ruff" check --no-cache --config libs/sdk/python/pyproject.toml tools/sdk/conformance/python
    "$ruff" format --no-cache --config libs/sdk/python/pyproject.toml --check tools/sdk/conformance/python
    cd libs/sdk/python
    "$ruff" check --no-cache .
    "$ruff" format --no-cache --check .
    ;;
  python-typecheck)
    cd libs/sdk/python
    "$SDK_PY" -m mypy --cache-dir "$SDK_CACHE/mypy-cache" mango_sdk
    ;;
  python-test | python-live)
    suite=unit; [ "$target" = python-live ] && suite=live
    status=0
    (cd libs/sdk/python && "$SDK_PY" -m pytest -p no:cacheprovider -q "tests/$suite" --junitxml="$work/junit.xml") || status=$?
    report junit "$work/junit.xml" "tmp/test-results/sdk-python.json"
    exit "$status"
    ;;
  python-wheel)
    out=$(mkdir -p "${2:?usage: run.sh python-wheel <out dir>}" && cd "$2" && pwd)
    # Build from a copy: setuptools writes build/ and *.egg-info next to the sources.
    cp -r libs/sdk/python "$work/src"
    rm -rf "$work/src/tests" && find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
    # Build isolation fetches the build backend (setuptools >= 77, PEP 639) from PyPI once; pip caches it.
    "$SDK_PY" -m pip wheel -q --no-deps --disable-pip-version-check -w "$out" "$work/src" >&2
    ls "$out"/mango_sdk-*.whl
    ;;
  go-lint)
    cd libs/sdk/go
    unformatted=$("$(dirname "$SDK_GO")/gofmt" -l .)
    if [ -n "$unformatted" ]; then echo "gofmt -l: these files need gofmt -w:" >&2; echo "$unformatted" >&2; exit 1; fi
    "$SDK_GO" vet ./...
    "$SDK_GO" vet -tags live ./...
    # The Go conformance program (its own module, the SDK through replace).
    unformatted=$("$(dirname "$SDK_GO")/gofmt" -l ../../../tools/sdk/conformance/go)
    if [ -n "$unformatted" ]; then echo "gofmt -l: these files need gofmt -w:" >&2; echo "$unformatted" >&2; exit 1; fi
    (cd ../../../tools/sdk/conformance/go && GOFLAGS="$GOFLAGS -mod=mod" "$SDK_GO" vet .)
    # The release's module-zip maker (tools/release/gomodproxy, its own module).
    unformatted=$("$(dirname "$SDK_GO")/gofmt" -l ../../../tools/release/gomodproxy)
    if [ -n "$unformatted" ]; then echo "gofmt -l: these files need gofmt -w:" >&2; echo "$unformatted" >&2; exit 1; fi
    (cd ../../../tools/release/gomodproxy && "$SDK_GO" vet .)
    ;;
  go-typecheck)
    cd libs/sdk/go
    "$SDK_GO" build ./...
    "$SDK_GO" test -tags live -count=1 -run '^$' ./... >/dev/null
    ;;
  go-test | go-live)
    status=0
    if [ "$target" = go-test ]; then args=(./...); else args=(-tags live -run '^TestLive' ./mango); fi
    (cd libs/sdk/go && "$SDK_GO" test -count=1 -json "${args[@]}") >"$work/go.jsonl" || status=$?
    # Human-readable output: the test log lines, without the JSON framing.
    node -e 'for (const l of require("fs").readFileSync(process.argv[1], "utf8").split("\n")) { if (!l.startsWith("{")) { if (l) console.log(l); continue; } const e = JSON.parse(l); if (e.Action === "output") process.stdout.write(e.Output); }' "$work/go.jsonl" \
      | grep -Ev '^(=== (RUN|PAUSE|CONT)|\s*$)' || true
    report gotest "$work/go.jsonl" "tmp/test-results/sdk-go.json"
    exit "$status"
    ;;
  *) echo "unknown target: $target" >&2; exit 2 ;;
esac
