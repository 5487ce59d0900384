#!/usr/bin/env bash
# npm run test:faults: the fault matrix (tools/faults/fault-matrix.faults-spec.ts) on real services. Like
# tools/ci/test.sh it starts the services it needs (PostgreSQL, Docker with the sandbox image, the Temporal and
# Toxiproxy binaries; the matrix runs its own Temporal dev server) and stops them after, unless they already run
# (MANGO_FAULTS_SHARED=1: use the services of the current environment, e.g. a helper's shared ones).
set -euo pipefail
cd "$(dirname "$0")/../.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false
bash tools/ci/ensure-node-deps.sh
if [ -z "${MANGO_FAULTS_SHARED:-}" ]; then
  export MANGO_SERVICES_RUN=${MANGO_SERVICES_RUN:-/tmp/mango-faults-$$}
  started=0
  cleanup() {
    if [ "$started" = 1 ] && [ -z "${MANGO_KEEP_SERVICES:-}" ]; then
      bash tools/ci/services.sh stop all || true
      case "$MANGO_SERVICES_RUN" in /tmp/mango-faults-*) rm -rf "$MANGO_SERVICES_RUN" ;; esac
    fi
  }
  trap cleanup EXIT
  started=1
  for s in pg temporal docker image toxiproxy; do bash tools/ci/services.sh start "$s"; done
fi
eval "$(bash tools/ci/services.sh env)"
start=$(date +%s)
status=0
node node_modules/jest/bin/jest.js -c tools/faults/jest.config.js "$@" || status=$?
echo "[faults] fault matrix took $(( $(date +%s) - start )) s (exit $status)"
exit "$status"
