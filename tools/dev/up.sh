#!/usr/bin/env bash
# npm run up — the whole local Mango stack in the background:
#   PostgreSQL, S3 (versitygw), Temporal, Docker (an existing engine when there is one), the four apps and
#   an nginx ingress on one base URL. Migrates, creates a Workspace API key and a default self_hosted
#   Environment with its supervisor key, prints the base URL and key and writes them to .mango/local.env.
# Settings pass through from the caller: MANGO_MODEL_BASE_URL, MANGO_MODEL_API_KEY, MANGO_PORT (8080).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
export MANGO_SERVICES_RUN=${MANGO_SERVICES_RUN:-/tmp/mango-up}
export MANGO_PG_PORT=${MANGO_UP_PG_PORT:-55433} MANGO_TEMPORAL_PORT=${MANGO_UP_TEMPORAL_PORT:-17234} MANGO_S3_PORT=${MANGO_UP_S3_PORT:-17071}
PORT=${MANGO_PORT:-8080}; API_PORT=${MANGO_UP_API_PORT:-8081}; FILES_PORT=${MANGO_UP_FILES_PORT:-8082}
# shellcheck source=../ci/services.sh
source tools/ci/services.sh
RUN=$MANGO_SERVICES_RUN
say() { printf '[up] %s\n' "$*" >&2; }

bash tools/ci/ensure-node-deps.sh
for svc in pg s3 temporal; do say "starting $svc"; "${svc}_start"; done

# Docker: an already running engine (DOCKER_HOST or the default socket) when there is one, else our own.
if [ -n "${DOCKER_HOST:-}" ] && docker -H "$DOCKER_HOST" info >/dev/null 2>&1; then say "using Docker at $DOCKER_HOST"
elif [ -z "${DOCKER_HOST:-}" ] && [ -S /var/run/docker.sock ] && docker -H unix:///var/run/docker.sock info >/dev/null 2>&1; then
  export DOCKER_HOST=unix:///var/run/docker.sock; say "using the Docker engine at /var/run/docker.sock"
else
  say "starting a private dockerd (no bridge, host or none networking only)"
  export MANGO_DOCKER_DATA_ROOT=$CACHE/docker-up; docker_start; export DOCKER_HOST=unix://$DOCKER_SOCK
fi
docker -H "$DOCKER_HOST" image inspect "$BASE_IMAGE" >/dev/null 2>&1 || { DOCKER_SOCK=${DOCKER_HOST#unix://} image_build; }

eval "$(print_env | grep -v '^export DOCKER_HOST')"
export MANGO_PUBLIC_BASE_URL=http://127.0.0.1:$PORT
say "migrating"
npx mango migrate >&2

start_app() { # start_app <name> <entry> — background, logs under $RUN/log, pid under $RUN/pid
  start_bg "$1" node -r "$ROOT/tools/runtime/register.js" "$ROOT/$2"
}
MANGO_API_PORT=$API_PORT start_app api apps/api/src/main.ts
MANGO_FILES_PORT=$FILES_PORT MANGO_S3_BUCKET=mango start_app files apps/files/src/main.ts
start_app orchestrator apps/orchestrator/src/main.ts
wait_tcp "$API_PORT" 60 api; wait_tcp "$FILES_PORT" 60 files

nginx_install
mkdir -p "$RUN/nginx"
sed -e "s#@RUN@#$RUN#g" -e "s#@PORT@#$PORT#g" -e "s#@API_PORT@#$API_PORT#g" -e "s#@FILES_PORT@#$FILES_PORT#g" \
  tools/dev/nginx.conf.template >"$RUN/nginx/nginx.conf"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
start_bg nginx "$NGINX" -c "$RUN/nginx/nginx.conf" -p "$RUN/nginx" -g 'daemon off;'
wait_tcp "$PORT" 30 nginx
BASE=http://127.0.0.1:$PORT
for _ in $(seq 1 100); do [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 200 ] && break; sleep 0.2; done

# Keys and the default Environment (reused when .mango/local.env still authenticates).
mkdir -p .mango
if [ -f .mango/local.env ]; then set -a; source .mango/local.env; set +a; fi
auth() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "$BASE/v1/environments?limit=1"; }
if [ -z "${MANGO_API_KEY:-}" ] || [ "$(auth "$MANGO_API_KEY")" != 200 ]; then
  MANGO_API_KEY=$(npx mango api-key create -workspace wrkspc_default -label local --json | node -pe 'JSON.parse(require("fs").readFileSync(0)).api_key')
  MANGO_ENVIRONMENT_ID=""
fi
H=(-H "Authorization: Bearer $MANGO_API_KEY" -H 'Content-Type: application/json')
if [ -z "${MANGO_ENVIRONMENT_ID:-}" ] || [ "$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" "$BASE/v1/environments/$MANGO_ENVIRONMENT_ID")" != 200 ]; then
  MANGO_ENVIRONMENT_ID=$(curl -s "${H[@]}" "$BASE/v1/environments?limit=1000" | node -pe 'const d=JSON.parse(require("fs").readFileSync(0)).data.find(e=>e.name==="local-docker"); d?d.id:""')
  [ -n "$MANGO_ENVIRONMENT_ID" ] || MANGO_ENVIRONMENT_ID=$(curl -s "${H[@]}" -X POST "$BASE/v1/environments" -d '{"name":"local-docker","description":"npm run up: the local Docker supervisor"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).id')
  MANGO_ENVIRONMENT_KEY=""
fi
if [ -z "${MANGO_ENVIRONMENT_KEY:-}" ] || [ "$(auth "$MANGO_ENVIRONMENT_KEY")" = 401 ]; then
  MANGO_ENVIRONMENT_KEY=$(npx mango api-key create -workspace wrkspc_default -environment "$MANGO_ENVIRONMENT_ID" -label local-supervisor --json | node -pe 'JSON.parse(require("fs").readFileSync(0)).api_key')
fi
umask 077
cat > .mango/local.env <<ENV
MANGO_BASE_URL=$BASE
MANGO_API_KEY=$MANGO_API_KEY
MANGO_DATABASE_URL=$MANGO_DATABASE_URL
MANGO_ENVIRONMENT_ID=$MANGO_ENVIRONMENT_ID
MANGO_ENVIRONMENT_KEY=$MANGO_ENVIRONMENT_KEY
ENV

# Sandboxes use the host network and reach the API on 127.0.0.1; the item runner comes from this checkout.
MANGO_BASE_URL=$BASE MANGO_ENVIRONMENT_ID=$MANGO_ENVIRONMENT_ID MANGO_ENVIRONMENT_KEY=$MANGO_ENVIRONMENT_KEY \
  MANGO_DOCKER_BASE_URL=$BASE MANGO_WORKER_IMAGE=$BASE_IMAGE MANGO_WORKER_SOURCE_DIR=$ROOT \
  MANGO_SUPERVISOR_ID=local-up start_app supervisor apps/supervisor/src/main.ts
for _ in $(seq 1 100); do grep -q 'docker engine connected' "$RUN/log/supervisor.log" 2>/dev/null && break; sleep 0.2; done

cat <<EOF2

Mango is up (logs: $RUN/log, stop with: npm run down)
  MANGO_BASE_URL=$BASE
  MANGO_API_KEY=$MANGO_API_KEY
  environment:   $MANGO_ENVIRONMENT_ID (supervisor running against it)
Written to .mango/local.env — e.g.  set -a; source .mango/local.env; set +a
Attach a terminal to a Session:  npx mango sessions connect <session_id>
EOF2
