#!/usr/bin/env bash
# tools/sdk/pack-typescript.sh <out dir> — builds libs/sdk/typescript (tsc → JS + .d.ts) and packs it with
# `npm pack` into <out dir>; prints the tarball's path. The package version is libs/sdk/typescript/package.json's,
# which follows the server's (root package.json; checked by src/package.spec.ts).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:?usage: pack-typescript.sh <out dir>}" && cd "$1" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$root/libs/sdk/typescript/package.json" "$stage/"
node "$root/node_modules/typescript/bin/tsc" -p "$root/libs/sdk/typescript/tsconfig.build.json" --outDir "$stage/dist"
(cd "$stage" && npm pack --silent --pack-destination "$out" >/dev/null)
ls "$out"/mango-sdk-*.tgz
