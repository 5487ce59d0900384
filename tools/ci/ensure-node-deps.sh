#!/usr/bin/env bash
# Installs node_modules from the lock file when missing or stale (fresh clone, changed lock file).
# Two callers at once (npm test beside the fault matrix, benches in git worktrees that bind-mount one
# node_modules) take turns: the lock is keyed by node_modules' device and inode, which a bind mount shares,
# and the second caller finds the first one's stamp.
set -euo pipefail
cd "$(dirname "$0")/../.."
stamp=node_modules/.mango-lock-sha
want=$(sha256sum package-lock.json | cut -d' ' -f1)
fresh() { [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; }
fresh && exit 0
mkdir -p node_modules
lock=${TMPDIR:-/tmp}/mango-node-deps-$(stat -c '%d-%i' node_modules).lock
exec 9>"$lock"
flock 9
if ! fresh; then
  echo "[deps] npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
