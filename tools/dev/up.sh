#!/usr/bin/env bash
# npm run up — the whole local Mango stack in the background:
#   PostgreSQL, S3 (versitygw), Temporal, Docker (an existing engine when there is one), the four apps and
#   an nginx ingress on one base URL. Migrates, creates a Workspace API key and a default self_hosted
#   Environment with its supervisor key, prints the base URL and key and writes them to .mango/local.env.
# Data is durable (PostgreSQL with fsync, Temporal on SQLite, S3 files) under $MANGO_UP_DATA, so
# `npm run down && npm run up` keeps Agents, Sessions, events, Files and running workflows.
# Settings pass through from the caller: MANGO_MODEL_BASE_URL / ANTHROPIC_BASE_URL, MANGO_MODEL_API_KEY /
# ANTHROPIC_API_KEY, MANGO_PORT (8080), MANGO_WORKER_NETWORK (none: sealed sandboxes), MANGO_WORKER_RUNTIME (unset:
# the daemon's default; runsc: gVisor, which the dockerd this script starts declares — docs/operator-guide.md "gVisor").
set -euo pipefail
# Files this script and the apps write get their modes explicitly; a restrictive caller umask (077) is fine.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
# shellcheck source=stack-env.sh
source tools/dev/stack-env.sh
PORT=${MANGO_PORT:-8080}; API_PORT=${MANGO_UP_API_PORT:-8081}; FILES_PORT=${MANGO_UP_FILES_PORT:-8082}
# Prometheus /metrics of each app on its own internal listener (127.0.0.1 only): api, files, orchestrator, supervisor.
METRICS_PORT=${MANGO_UP_METRICS_PORT:-9464}
M_API=$METRICS_PORT; M_FILES=$((METRICS_PORT + 1)); M_ORCH=$((METRICS_PORT + 2)); M_SUP=$((METRICS_PORT + 3))
# shellcheck source=../ci/services.sh
source tools/ci/services.sh
RUN=$MANGO_SERVICES_RUN
say() { printf '[up] %s\n' "$*" >&2; }

bash tools/ci/ensure-node-deps.sh
command -v jq >/dev/null || apt_ensure jq   # the README's tour reads JSON with jq
command -v curl >/dev/null || apt_ensure curl
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
# At-rest keys of the local stack (Vault keyring, webhook signing secrets), made once and kept with its data.
SECRETS=$MANGO_UP_DATA/secrets.env
if ! [ -s "$SECRETS" ]; then
  node -e 'const r=(n)=>require("crypto").randomBytes(n).toString("base64");
    process.stdout.write(`MANGO_VAULT_KEYRING=local1:${r(32)}\nMANGO_WEBHOOK_SECRETS_KEY=${r(32)}\n`)' >"$SECRETS.tmp"
  chmod 600 "$SECRETS.tmp"; mv "$SECRETS.tmp" "$SECRETS"
fi
set -a; source "$SECRETS"; set +a
# The local stack may call MCP servers and webhook receivers on this machine (production refuses them).
export MANGO_MCP_ALLOWED_ADDRESSES=${MANGO_MCP_ALLOWED_ADDRESSES:-127.0.0.0/8,::1/128}
export MANGO_WEBHOOK_ALLOWED_CIDRS=${MANGO_WEBHOOK_ALLOWED_CIDRS:-127.0.0.0/8,::1/128}
say "migrating"
npx mango migrate >&2
# The web console (apps/console), served by apps/api at /console; Nx skips the build when nothing changed.
say "building the web console"
NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false npx nx run console:build --outputStyle=stream >&2

start_app() { # start_app <name> <entry> — background, logs under $RUN/log, pid under $RUN/pid
  start_bg "$1" node -r "$ROOT/tools/runtime/register.js" "$ROOT/$2"
}
# A port held by another process would kill our app at boot (EADDRINUSE) while the readiness check below
# still saw the port open (answered by that other process): refuse it, unless it is our own running app.
free_port() { ! port_busy "$2" || { say "port 127.0.0.1:$2 for $1 is already in use by another process (another stack? set MANGO_PORT / the MANGO_UP_*_PORT variables, or stop it)"; exit 1; }; }
running api || { free_port api "$API_PORT"; free_port "api metrics" "$M_API"; }
running files || { free_port files "$FILES_PORT"; free_port "files metrics" "$M_FILES"; }
MANGO_API_PORT=$API_PORT MANGO_METRICS_PORT=$M_API start_app api apps/api/src/main.ts
MANGO_FILES_PORT=$FILES_PORT MANGO_METRICS_PORT=$M_FILES MANGO_S3_BUCKET=mango start_app files apps/files/src/main.ts
# The model endpoint: MANGO_MODEL_* first, then the usual ANTHROPIC_* variables, then the public API.
# The orchestrator resolves them itself; here they are only printed. Empty ones are not passed on.
MODEL_URL=${MANGO_MODEL_BASE_URL:-${ANTHROPIC_BASE_URL:-}}; MODEL_KEY=${MANGO_MODEL_API_KEY:-${ANTHROPIC_API_KEY:-}}
for v in MANGO_MODEL_BASE_URL MANGO_MODEL_API_KEY ANTHROPIC_BASE_URL ANTHROPIC_API_KEY; do [ -n "${!v:-}" ] || unset "$v"; done
stop_bg orchestrator; MANGO_S3_BUCKET=mango MANGO_METRICS_PORT=$M_ORCH start_app orchestrator apps/orchestrator/src/main.ts   # restarted: picks up model settings
wait_tcp "$API_PORT" 60 api; wait_tcp "$FILES_PORT" 60 files
# The orchestrator validates its configuration at boot: a refusal is reported here, never a silent "up".
for _ in $(seq 1 600); do grep -q 'temporal worker running' "$RUN/log/orchestrator.log" 2>/dev/null && break; running orchestrator || break; sleep 0.2; done
grep -q 'temporal worker running' "$RUN/log/orchestrator.log" 2>/dev/null ||
  { say "the orchestrator did not start: $(tail -n 20 "$RUN/log/orchestrator.log" 2>/dev/null) (log: $RUN/log/orchestrator.log)"; exit 1; }

nginx_install
mkdir -p "$RUN/nginx"
sed -e "s#@RUN@#$RUN#g" -e "s#@PORT@#$PORT#g" -e "s#@API_PORT@#$API_PORT#g" -e "s#@FILES_PORT@#$FILES_PORT#g" \
  tools/dev/nginx.conf.template >"$RUN/nginx/nginx.conf"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
start_bg nginx "$NGINX" -c "$RUN/nginx/nginx.conf" -p "$RUN/nginx" -g 'daemon off;'
wait_tcp "$PORT" 30 nginx
BASE=http://127.0.0.1:$PORT
for _ in $(seq 1 100); do [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 200 ] && break; sleep 0.2; done

# Keys and the default Environment: reused while they still work, replaced (and said so) when not.
mkdir -p .mango
node -r "$ROOT/tools/runtime/register.js" tools/dev/local-bootstrap.ts "$BASE" .mango/local.env
set -a; source .mango/local.env; set +a

# Sandboxes are sealed (no network); they reach Mango only through the supervisor's Work API socket.
# The supervisor is restarted so that it always runs against the Environment and key just written.
stop_bg supervisor
MANGO_BASE_URL=$BASE MANGO_ENVIRONMENT_ID=$MANGO_ENVIRONMENT_ID MANGO_ENVIRONMENT_KEY=$MANGO_ENVIRONMENT_KEY \
  MANGO_WORKER_IMAGE=$BASE_IMAGE MANGO_WORKER_SOURCE_DIR=$ROOT MANGO_WORKER_SOCKET_DIR=$RUN/sockets \
  MANGO_WORKER_NETWORK=${MANGO_WORKER_NETWORK:-none} MANGO_SUPERVISOR_ID=local-up MANGO_METRICS_PORT=$M_SUP \
  start_app supervisor apps/supervisor/src/main.ts
# As long as the orchestrator's (a first start transpiles the sources; a loaded machine takes a while), and
# a supervisor that exited is reported at once with its last log line.
for _ in $(seq 1 600); do grep -q 'docker engine connected' "$RUN/log/supervisor.log" 2>/dev/null && break; running supervisor || break; sleep 0.2; done
grep -q 'docker engine connected' "$RUN/log/supervisor.log" 2>/dev/null ||
  { say "the supervisor did not start: $(tail -n 20 "$RUN/log/supervisor.log" 2>/dev/null) (log: $RUN/log/supervisor.log)"; exit 1; }

if [ -n "$MODEL_URL" ]; then model="$MODEL_URL"; else model="https://api.anthropic.com (the public Anthropic API)"; fi
if [ -n "$MODEL_KEY" ]; then model_key="a key is set"
elif [ -n "$MODEL_URL" ]; then model_key="no key (MANGO_MODEL_API_KEY / ANTHROPIC_API_KEY unset; fine for a local endpoint)"
else model_key="NO KEY: Session turns end with session.error until you set MANGO_MODEL_API_KEY or ANTHROPIC_API_KEY and rerun npm run up"; fi

cat <<EOF2

Mango is up (logs: $RUN/log, stop with: npm run down)
  MANGO_BASE_URL=$BASE
  MANGO_API_KEY=$MANGO_API_KEY
  console:       $BASE/console/ (sign in with the MANGO_API_KEY above; it stays in that browser tab)
  metrics:       http://127.0.0.1:$M_API/metrics (api), :$M_FILES (files), :$M_ORCH (orchestrator), :$M_SUP (supervisor)
  environment:   $MANGO_ENVIRONMENT_ID (supervisor running against it; sandbox network: ${MANGO_WORKER_NETWORK:-none}; runtime: ${MANGO_WORKER_RUNTIME:-the daemon default})
  model:         $model — $model_key
  data:          $MANGO_UP_DATA (durable; npm run down && npm run up keeps it)
  loopback:      MCP servers and webhook receivers on 127.0.0.1 are allowed here (production refuses them)
Written to .mango/local.env — e.g.  set -a; source .mango/local.env; set +a
Attach a terminal to a Session:  npx mango sessions connect <session_id>
EOF2
