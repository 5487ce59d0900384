#!/usr/bin/env bash
# tools/dev/new-lib.sh <dir> <import-name> <type-tag> <scope-tag>
# Scaffolds a library: project.json, tsconfig.json, jest.config.js, src/index.ts, and registers the
# @mango/* path alias in tsconfig.base.json.
set -euo pipefail
dir=$1 name=$2 type=$3 scope=$4
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/$dir/src"
rel=$(python3 -c "import os,sys;print(os.path.relpath('$root','$root/$dir'))")
proj=$(echo "$name" | sed 's/^@mango\///')
[ -f "$root/$dir/project.json" ] || cat >"$root/$dir/project.json" <<JSON
{
  "name": "$proj",
  "\$schema": "$rel/node_modules/nx/schemas/project-schema.json",
  "sourceRoot": "$dir/src",
  "projectType": "library",
  "tags": ["type:$type", "scope:$scope"],
  "targets": { "lint": {}, "test": {}, "typecheck": {} }
}
JSON
[ -f "$root/$dir/tsconfig.json" ] || cat >"$root/$dir/tsconfig.json" <<JSON
{ "extends": "$rel/tsconfig.base.json", "include": ["src/**/*.ts"] }
JSON
[ -f "$root/$dir/jest.config.js" ] || cat >"$root/$dir/jest.config.js" <<JS
module.exports = { ...require('$rel/jest.preset.js'), displayName: '$proj', rootDir: __dirname };
JS
[ -f "$root/$dir/src/index.ts" ] || echo "export {};" >"$root/$dir/src/index.ts"
python3 - "$root" "$name" "$dir" <<'PY'
import json,sys
root,name,d=sys.argv[1:]
p=root+'/tsconfig.base.json'; c=json.load(open(p))
c['compilerOptions']['paths'][name]=[d+'/src/index.ts']
c['compilerOptions']['paths']=dict(sorted(c['compilerOptions']['paths'].items()))
json.dump(c,open(p,'w'),indent=2); open(p,'a').write('\n')
PY
