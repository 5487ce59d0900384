#!/usr/bin/env bash
# npm run test:faults: the fault matrix (tools/faults/fault-matrix.faults-spec.ts) on real services. The
# matrix runs its own PostgreSQL cluster, Temporal dev server and Toxiproxy on free ports (it stops and
# restarts them), so this script only installs their binaries; it starts a dockerd of its own (socket under
# its run directory, data-root $CACHE/docker-faults: never another daemon's) with the sandbox image and stops
# it after. MANGO_FAULTS_SHARED=1 uses the Docker daemon of the current environment instead (e.g. a helper's
# shared one: the matrix only kills its own containers there).
set -euo pipefail
cd "$(dirname "$0")/../.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false
bash tools/ci/ensure-node-deps.sh
if [ -z "${MANGO_FAULTS_SHARED:-}" ]; then
  # Always a run directory and data-root of its own, whatever the caller's environment says: `stop all`
  # below must never reach another stack's services, and two dockerd on one data-root deadlock.
  export MANGO_SERVICES_RUN=${MANGO_FAULTS_RUN:-/tmp/mango-faults-$$}
  export MANGO_SERVICES_DATA=$MANGO_SERVICES_RUN
  export MANGO_DOCKER_DATA_ROOT=${MANGO_FAULTS_DOCKER_DATA_ROOT:-${MANGO_SERVICES_CACHE:-${HOME:-/root}/.cache/mango-services}/docker-faults}
  started=0
  cleanup() {
    if [ "$started" = 1 ] && [ -z "${MANGO_KEEP_SERVICES:-}" ]; then
      bash tools/ci/services.sh stop all || true
      case "$MANGO_SERVICES_RUN" in /tmp/mango-faults-*) rm -rf "$MANGO_SERVICES_RUN" ;; esac
    fi
  }
  trap cleanup EXIT
  started=1
  for s in docker image; do bash tools/ci/services.sh start "$s"; done
fi
for s in pg temporal s3 toxiproxy faketime; do bash tools/ci/services.sh install "$s"; done
eval "$(bash tools/ci/services.sh env)"
start=$(date +%s)
status=0
node node_modules/jest/bin/jest.js -c tools/faults/jest.config.js "$@" || status=$?
echo "[faults] fault matrix took $(( $(date +%s) - start )) s (exit $status)"
exit "$status"
