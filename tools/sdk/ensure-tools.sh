#!/usr/bin/env bash
# tools/sdk/ensure-tools.sh — installs (once) and exports the toolchains the Python and Go SDKs need.
# Source it (`. tools/sdk/ensure-tools.sh`) or run it. Everything lives under $MANGO_SDK_TOOLS_CACHE
# (default ~/.cache/mango-sdk-tools), which this script owns:
#   venv/          Python venv with tools/sdk/requirements.txt (PyPI), re-created when that file changes
#   schemathesis-venv/  Python venv with tools/schemathesis/requirements.txt (the API fuzzing target), same rule
#   bin/           oapi-codegen $OAPI_CODEGEN_VERSION (Go module proxy, `go install`)
#   go/mod, go/build   Go module and build caches for the SDK
#   toolchain/     a Go toolchain from the module proxy (golang.org/toolchain), only when no Go >= 1.26 is found (the generated client needs github.com/oapi-codegen/runtime v1.9, which needs Go 1.26)
# Exports: SDK_PY (venv python), SDK_GO (go binary), SDK_OAPI_CODEGEN, GOMODCACHE, GOCACHE, GOFLAGS.
# `MANGO_SDK_TOOLS=schemathesis` ensures only the Schemathesis venv and exports SDK_SCHEMATHESIS (its `st`).
set -euo pipefail
OAPI_CODEGEN_VERSION=v2.8.2
SDK_GO_TOOLCHAIN=go1.26.8
SDK_CACHE=${MANGO_SDK_TOOLS_CACHE:-${HOME:-/root}/.cache/mango-sdk-tools}
_sdk_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
_sdk_log() { printf '[sdk-tools] %s\n' "$*" >&2; }
mkdir -p "$SDK_CACHE/bin"
export GOMODCACHE=$SDK_CACHE/go/mod GOCACHE=$SDK_CACHE/go/build GOFLAGS=-modcacherw GOTOOLCHAIN=local
export GOPROXY=${GOPROXY:-https://proxy.golang.org} CGO_ENABLED=0

# Python ------------------------------------------------------------------------------------------
_sdk_python() { _sdk_venv venv tools/sdk/requirements.txt; }
_sdk_venv() { # _sdk_venv <dir under $SDK_CACHE> <requirements file in the repo>
  local dir=$SDK_CACHE/$1 reqs=$_sdk_root/$2 want stamp=$SDK_CACHE/$1/.requirements-sha py=""
  want=$(sha256sum "$reqs" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ -x "$dir/bin/python" ]; then return 0; fi
  for cand in python3.12 python3.11 python3.10 python3; do
    if command -v "$cand" >/dev/null && "$cand" -c 'import sys, venv; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
      py=$cand; break
    fi
  done
  if [ -z "$py" ] || ! "$py" -m venv --help >/dev/null 2>&1 || ! "$py" -c 'import ensurepip' 2>/dev/null; then
    [ "$(id -u)" = 0 ] || { _sdk_log "need Python >= 3.10 with venv (apt-get install python3 python3-venv)"; return 1; }
    _sdk_log "apt-get install python3 python3-venv"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends python3 python3-venv >/dev/null \
      || { apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends python3 python3-venv >/dev/null; }
    py=python3
  fi
  _sdk_log "creating $dir ($("$py" --version)) from $2"
  rm -rf "$dir"
  "$py" -m venv "$dir"
  "$dir/bin/python" -m pip install -q --disable-pip-version-check -r "$reqs"
  echo "$want" > "$stamp"
}

# Go ----------------------------------------------------------------------------------------------
_sdk_go_ok() { "$1" version 2>/dev/null | grep -Eq 'go1\.(2[6-9]|[3-9][0-9])'; }
_sdk_go() {
  local cand
  for cand in "$(command -v go || true)" /usr/local/go/bin/go "$SDK_CACHE/toolchain/go/bin/go"; do
    if [ -n "$cand" ] && [ -x "$cand" ] && _sdk_go_ok "$cand"; then SDK_GO=$cand; return 0; fi
  done
  # No recent Go: fetch the official toolchain module from the Go module proxy (what GOTOOLCHAIN does).
  local arch zip
  case "$(uname -m)" in x86_64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; *) _sdk_log "no Go toolchain for $(uname -m)"; return 1 ;; esac
  zip=$SDK_CACHE/toolchain.zip
  _sdk_log "downloading Go $SDK_GO_TOOLCHAIN (golang.org/toolchain) from $GOPROXY"
  # The venv's Python downloads it (curl may be missing on a minimal machine).
  "$SDK_CACHE/venv/bin/python" -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
    "${GOPROXY%%,*}/golang.org/toolchain/@v/v0.0.1-$SDK_GO_TOOLCHAIN.linux-$arch.zip" "$zip"
  rm -rf "$SDK_CACHE/toolchain" && mkdir -p "$SDK_CACHE/toolchain"
  # The module zip holds a GOROOT under golang.org/toolchain@<version>/.
  "$SDK_CACHE/venv/bin/python" - "$zip" "$SDK_CACHE/toolchain/go" "golang.org/toolchain@v0.0.1-$SDK_GO_TOOLCHAIN.linux-$arch/" <<'PY'
import os, sys, zipfile
archive, root, prefix = sys.argv[1:4]
with zipfile.ZipFile(archive) as z:
    for info in z.infolist():
        if info.is_dir() or not info.filename.startswith(prefix):
            continue
        dest = os.path.join(root, info.filename[len(prefix):])
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with z.open(info) as src, open(dest, "wb") as out:
            out.write(src.read())
        os.chmod(dest, (info.external_attr >> 16) & 0o777 or 0o644)
PY
  rm -f "$zip"
  SDK_GO=$SDK_CACHE/toolchain/go/bin/go
  _sdk_go_ok "$SDK_GO" || { _sdk_log "downloaded Go toolchain does not run"; return 1; }
}

_sdk_oapi_codegen() {
  local want=$SDK_CACHE/bin/oapi-codegen-$OAPI_CODEGEN_VERSION
  if ! [ -x "$want" ]; then
    _sdk_log "go install oapi-codegen@$OAPI_CODEGEN_VERSION"
    rm -rf "$SDK_CACHE/tmpbin"
    GOBIN=$SDK_CACHE/tmpbin "$SDK_GO" install "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@$OAPI_CODEGEN_VERSION"
    mv "$SDK_CACHE/tmpbin/oapi-codegen" "$want" && rm -rf "$SDK_CACHE/tmpbin"
  fi
  SDK_OAPI_CODEGEN=$want
}

# Serialize concurrent first-time installs (Nx runs the SDK targets in parallel).
exec {_sdk_lock}>"$SDK_CACHE/.lock"
flock "$_sdk_lock"
if [ "${MANGO_SDK_TOOLS:-}" = schemathesis ]; then
  _sdk_venv schemathesis-venv tools/schemathesis/requirements.txt
  flock -u "$_sdk_lock"
  exec {_sdk_lock}>&-
  export SDK_SCHEMATHESIS=$SDK_CACHE/schemathesis-venv/bin/st SDK_CACHE
else
_sdk_python
_sdk_go
_sdk_oapi_codegen
flock -u "$_sdk_lock"
exec {_sdk_lock}>&-
export SDK_PY=$SDK_CACHE/venv/bin/python SDK_GO SDK_OAPI_CODEGEN SDK_CACHE
fi
