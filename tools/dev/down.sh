#!/usr/bin/env bash
# npm run down — stops everything `npm run up` started (apps, nginx, services), nothing else.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
export MANGO_SERVICES_RUN=${MANGO_SERVICES_RUN:-/tmp/mango-up}
export MANGO_PG_PORT=${MANGO_UP_PG_PORT:-55433} MANGO_TEMPORAL_PORT=${MANGO_UP_TEMPORAL_PORT:-17234} MANGO_S3_PORT=${MANGO_UP_S3_PORT:-17071}
# shellcheck source=../ci/services.sh
source tools/ci/services.sh
for p in supervisor nginx orchestrator files api; do stop_bg "$p"; done
s3_stop; temporal_stop; pg_stop; docker_stop
echo "[down] stopped" >&2
