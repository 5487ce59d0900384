#!/usr/bin/env bash
# tools/bench/run.sh <name> [args…] — starts the real services (MANGO_BENCH_SERVICES, default pg) and runs tools/bench/<name>/main.ts. Prints figures only.
# The services this run started are stopped when it ends (so they never hold the ports a later `npm test` needs);
# MANGO_BENCH_KEEP_SERVICES=1 keeps them for the next run. Services that were already up are left alone.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/ci/ensure-node-deps.sh
export MANGO_SERVICES_RUN=${MANGO_SERVICES_RUN:-/tmp/mango-bench}
services=${MANGO_BENCH_SERVICES:-pg}
started=()
for s in $services; do
  pidfile=$MANGO_SERVICES_RUN/pid/$s.pid
  case "$s" in
    docker) pidfile=$MANGO_SERVICES_RUN/pid/dockerd.pid ;;
    # pg_ctl keeps PostgreSQL's pid in its data directory (first line of postmaster.pid), not under pid/.
    pg) pidfile=${MANGO_SERVICES_DATA:-$MANGO_SERVICES_RUN}/pg/data/postmaster.pid ;;
  esac
  if ! { [ -f "$pidfile" ] && kill -0 "$(head -n1 "$pidfile")" 2>/dev/null; }; then started+=("$s"); fi
done
stop_started() { [ -n "${MANGO_BENCH_KEEP_SERVICES:-}" ] || [ ${#started[@]} -eq 0 ] || bash tools/ci/services.sh stop "${started[*]}" >&2 || true; }
trap stop_started EXIT
bash tools/ci/services.sh start "$services" >&2
eval "$(bash tools/ci/services.sh env)"
node -r ./tools/runtime/register.js "tools/bench/$1/main.ts" "${@:2}"
