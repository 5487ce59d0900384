#!/usr/bin/env bash
# tools/sdk/generate.sh — regenerates the SDK code that comes from openapi.yaml.
#   tools/sdk/generate.sh [typescript|python|go|all]          write into libs/sdk/* (commit the result)
#   tools/sdk/generate.sh --check [typescript|python|go|all]  regenerate into a temp dir; exit 1 and print a diff on drift
# MANGO_OPENAPI=<file> generates from another copy of the contract (e.g. `git show HEAD:openapi.yaml`).
#
# Resources (all three): tools/sdk/generate-resources.js groups every operation by its operationId
#         (environments.work.poll -> client.environments.work.poll / Environments.Work.Poll).
# TypeScript: openapi-typescript -> libs/sdk/typescript/src/generated/openapi.ts (types) + resources.ts.
# Python: datamodel-code-generator -> libs/sdk/python/mango_sdk/_generated/models.py (TypedDicts) + resources.py.
# Go:     openapi.yaml -> tools/sdk/normalize-openapi.js (3.1 -> the 3.0 dialect oapi-codegen reads)
#         -> oapi-codegen (tools/sdk/oapi-codegen.yaml) -> libs/sdk/go/generated/mango.gen.go; resources
#         -> libs/sdk/go/mango/resources.gen.go (checked with the generated directory).
# Tool versions are pinned in tools/sdk/ensure-tools.sh and tools/sdk/requirements.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
which=${1:-all}
case "$which" in typescript | python | go | all) ;; *) echo "usage: $0 [--check] [typescript|python|go|all]" >&2; exit 2 ;; esac
# TypeScript needs only Node and the repository's node_modules (openapi-typescript).
if [ "$which" != typescript ]; then . tools/sdk/ensure-tools.sh; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Generators read a copy named openapi.yaml in a directory of its own, so their output (which names the
# input file) does not depend on where the contract or the output lives.
mkdir -p "$tmp/spec"
cp "${MANGO_OPENAPI:-openapi.yaml}" "$tmp/spec/openapi.yaml"
PY_DIR=libs/sdk/python/mango_sdk/_generated
GO_DIR=libs/sdk/go/generated
TS_DIR=libs/sdk/typescript/src/generated

gen_typescript() { # gen_typescript <out dir>
  mkdir -p "$1"
  node "$root/node_modules/openapi-typescript/bin/cli.js" "$tmp/spec/openapi.yaml" -o "$1/openapi.ts" \
    >"$tmp/openapi-typescript.log" 2>&1 || { cat "$tmp/openapi-typescript.log" >&2; return 1; }
  node tools/sdk/generate-resources.js "$tmp/spec/openapi.yaml" typescript "$1/resources.ts"
}

gen_python() { # gen_python <out dir>
  mkdir -p "$1"
  (cd "$tmp/spec" && PATH=$SDK_CACHE/venv/bin:$PATH "$SDK_CACHE/venv/bin/datamodel-codegen" \
    --input openapi.yaml --input-file-type openapi --output "$1/models.py" \
    --output-model-type typing.TypedDict --target-python-version 3.10 \
    --use-standard-collections --use-union-operator --enum-field-as-literal all \
    --use-schema-description --disable-timestamp --formatters ruff-format) 2>"$tmp/datamodel-codegen.log" \
    || { cat "$tmp/datamodel-codegen.log" >&2; return 1; }
  printf '%s\n' '"""Generated from openapi.yaml by tools/sdk/generate.sh. Do not edit."""' > "$1/__init__.py"
  node tools/sdk/generate-resources.js "$tmp/spec/openapi.yaml" python "$1/resources.py" "$1/models.py"
  "$SDK_CACHE/venv/bin/ruff" format --no-cache --quiet --line-length 110 --target-version py310 "$1/resources.py"
}

gen_go() { # gen_go <out dir>
  mkdir -p "$1"
  node tools/sdk/normalize-openapi.js "$tmp/spec/openapi.yaml" "$tmp/openapi.go.yaml"
  "$SDK_OAPI_CODEGEN" -config tools/sdk/oapi-codegen.yaml -o "$1/mango.gen.go" "$tmp/openapi.go.yaml"
  # The resource layer lives in package mango; it is generated (and checked) with this directory.
  node tools/sdk/generate-resources.js "$tmp/spec/openapi.yaml" go "$tmp/resources.gen.go"
  "$(dirname "$SDK_GO")/gofmt" -w "$tmp/resources.gen.go"
}
GO_RESOURCES=libs/sdk/go/mango/resources.gen.go

status=0
for lang in typescript python go; do
  [ "$which" = all ] || [ "$which" = "$lang" ] || continue
  case "$lang" in typescript) dir=$TS_DIR ;; python) dir=$PY_DIR ;; go) dir=$GO_DIR ;; esac
  # Always generate outside the repository: formatters pick up the nearest pyproject.toml, and the
  # output must not depend on where it is written.
  "gen_$lang" "$tmp/$lang"
  if [ "$check" = 1 ]; then
    if [ "$lang" = go ] && ! diff -u "$GO_RESOURCES" "$tmp/resources.gen.go" >"$tmp/go-resources.diff"; then
      echo "[sdk] $GO_RESOURCES is out of date with openapi.yaml; run tools/sdk/generate.sh go and commit the result:" >&2
      head -n 60 "$tmp/go-resources.diff" >&2
      status=1
    fi
    if ! diff -ru --exclude=__pycache__ "$dir" "$tmp/$lang" >"$tmp/$lang.diff"; then
      echo "[sdk] $dir is out of date with openapi.yaml; run tools/sdk/generate.sh $lang and commit the result:" >&2
      head -n 60 "$tmp/$lang.diff" >&2
      status=1
    else
      echo "[sdk] $dir is up to date" >&2
    fi
  else
    # The generated directories hold only generated files: replace them whole.
    rm -rf "$dir" && cp -r "$tmp/$lang" "$dir"
    echo "[sdk] wrote $dir" >&2
    if [ "$lang" = go ]; then cp "$tmp/resources.gen.go" "$GO_RESOURCES" && echo "[sdk] wrote $GO_RESOURCES" >&2; fi
  fi
done
exit "$status"
