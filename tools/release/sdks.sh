#!/usr/bin/env bash
# tools/release/sdks.sh <out dir> — the three SDK packages of this tree's version (tools/release/version.js),
# each made by its ecosystem's own tool, as a user would publish it:
#   <out>/npm/mango-sdk-<v>.tgz                     plain `npm pack` (the package's prepack build)
#   <out>/python/mango_sdk-<pep440>.tar.gz, …whl    `python -m build` (the sdist, then the wheel built from it)
#   <out>/go/mango.dev/sdk/@v/{list,v<v>.info,.mod,.zip}  the Go module as a GOPROXY directory (gomodproxy,
#                                                   golang.org/x/mod/zip): GOPROXY=file://<out>/go go get …
# Prints each file it made. Run by tools/release/release.sh and by the conformance test
# (tools/sdk/test/conformance.e2e-spec.ts), which installs these files and runs the conformance programs.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:?usage: sdks.sh <out dir>}" && cd "$1" && pwd)
cd "$root"
version=$(node tools/release/version.js check)
. tools/sdk/ensure-tools.sh
_sdk_venv release-venv tools/release/requirements.txt # `build`, beside the SDK's venv (same cache rules)
release_py=$SDK_CACHE/release-venv/bin/python
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# TypeScript ------------------------------------------------------------------------------------------
bash tools/sdk/pack-typescript.sh "$out/npm" >/dev/null

# Python: from a copy (setuptools writes build/ and *.egg-info beside the sources). Build isolation takes the
# backend (setuptools >= 77, PEP 639) from PyPI once; pip caches it.
mkdir -p "$work/python"
cp -r libs/sdk/python/pyproject.toml libs/sdk/python/README.md libs/sdk/python/LICENSE libs/sdk/python/mango_sdk "$work/python/"
find "$work/python" -name __pycache__ -prune -exec rm -rf {} +
"$release_py" -m build --outdir "$out/python" "$work/python" >"$work/python-build.log" 2>&1 \
  || { cat "$work/python-build.log" >&2; exit 1; }

# Go: the module zip for tag libs/sdk/go/v<version>, timed at the commit it is made from.
stamp=$(git log -1 --format=%cI HEAD 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)
(cd tools/release/gomodproxy && "$SDK_GO" run . -dir "$root/libs/sdk/go" -version "v$version" -time "$stamp" -out "$out/go") >/dev/null

(cd "$out" && find npm python go -type f | sort)
