#!/usr/bin/env bash
# Installs node_modules from the lock file when missing or stale (fresh clone, changed lock file).
set -euo pipefail
cd "$(dirname "$0")/../.."
stamp=node_modules/.mango-lock-sha
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[deps] npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
