#!/usr/bin/env bash
# tools/bench/run.sh <name> [args…] — starts the real services (MANGO_BENCH_SERVICES, default pg) and runs tools/bench/<name>/main.ts. Prints figures only.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/ci/ensure-node-deps.sh
export MANGO_SERVICES_RUN=${MANGO_SERVICES_RUN:-/tmp/mango-bench}
bash tools/ci/services.sh start "${MANGO_BENCH_SERVICES:-pg}" >&2
eval "$(bash tools/ci/services.sh env)"
node -r ./tools/runtime/register.js "tools/bench/$1/main.ts" "${@:2}"
