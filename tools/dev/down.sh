#!/usr/bin/env bash
# npm run down — stops everything `npm run up` started (apps, nginx, services), nothing else.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
# shellcheck source=stack-env.sh
source tools/dev/stack-env.sh
# shellcheck source=../ci/services.sh
source tools/ci/services.sh
for p in supervisor nginx orchestrator files api; do stop_bg "$p"; done
s3_stop; temporal_stop; pg_stop; docker_stop
echo "[down] stopped" >&2
