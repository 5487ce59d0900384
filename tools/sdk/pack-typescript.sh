#!/usr/bin/env bash
# tools/sdk/pack-typescript.sh <out dir> — the TypeScript SDK's npm tarball, made by plain `npm pack` (the
# package's own `prepack` builds dist/: CommonJS, the ES module entry and the declarations; README and LICENSE
# ship beside them) into <out dir>; prints the tarball's path. It packs a copy of libs/sdk/typescript below
# tmp/, so two runs at once (the release and the conformance test) never share a dist/ directory; the copy
# stays inside the repository so the build finds its node_modules. The version is package.json's, which
# follows the root package.json (tools/release/version.js check).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:?usage: pack-typescript.sh <out dir>}" && cd "$1" && pwd)
mkdir -p "$root/tmp"
stage=$(mktemp -d "$root/tmp/sdk-pack.XXXXXX")
trap 'rm -rf "$stage"' EXIT
src=$root/libs/sdk/typescript
cp -r "$src/package.json" "$src/README.md" "$src/LICENSE" "$src/tsconfig.build.json" "$src/scripts" "$src/src" "$stage/"
name=$(cd "$stage" && npm pack --silent --pack-destination "$out")
echo "$out/$name"
