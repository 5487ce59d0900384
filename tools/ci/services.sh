#!/usr/bin/env bash
# tools/ci/services.sh — install, build, cache and start the real services Mango's tests and local stack need.
#   tools/ci/services.sh install [pg|temporal|s3|docker|image|deploytools|toxiproxy|all]
#   tools/ci/services.sh start   [pg|temporal|s3|docker|image|deploytools|toxiproxy|all]…  (one or more; quoted lists too)
#   tools/ci/services.sh stop    [pg|temporal|s3|docker|all]
#   eval "$(tools/ci/services.sh env)"
# Idempotent. Builds are cached under $MANGO_SERVICES_CACHE (default ~/.cache/mango-services), which this
# script owns; per-run state lives under $MANGO_SERVICES_RUN (default /tmp/mango-svc), and data (PostgreSQL,
# S3, Temporal's database) under $MANGO_SERVICES_DATA (default: the run directory). Tests run PostgreSQL
# without fsync and Temporal in memory; MANGO_SERVICES_DURABLE=1 (npm run up) keeps both on disk, durably.
# Every listener binds 127.0.0.1; dockerd runs without a bridge, so no container ever gets a private-range
# address.
set -euo pipefail
CACHE=${MANGO_SERVICES_CACHE:-${HOME:-/root}/.cache/mango-services}
RUN=${MANGO_SERVICES_RUN:-/tmp/mango-svc}
DATA=${MANGO_SERVICES_DATA:-$RUN}
DURABLE=${MANGO_SERVICES_DURABLE:-}
PG_PORT=${MANGO_PG_PORT:-55432}; TEMPORAL_PORT=${MANGO_TEMPORAL_PORT:-17233}; S3_PORT=${MANGO_S3_PORT:-17070}
S3_ACCESS_KEY=${MANGO_S3_ACCESS_KEY:-mangoaccess}; S3_SECRET_KEY=${MANGO_S3_SECRET_KEY:-mangosecretkey123}
TEMPORAL_CLI_VERSION=${TEMPORAL_CLI_VERSION:-v1.5.1}; VERSITYGW_VERSION=${VERSITYGW_VERSION:-v1.7.0}
# The sandbox image (tools/docker/sandbox-image.sh): Debian bookworm's userland plus the machine's Node.
# Bump the tag when its contents change (it is cached in the daemon's data-root).
BASE_IMAGE=${MANGO_BASE_IMAGE:-mango-sandbox:v3}
BIN=$CACHE/bin
export GOMODCACHE=$CACHE/go/mod GOCACHE=$CACHE/go/build GOFLAGS=-modcacherw CGO_ENABLED=0
mkdir -p "$BIN" "$RUN/log" "$RUN/pid" "$DATA"
log() { printf '[services] %s\n' "$*" >&2; }

# Two stacks may start at once on a fresh machine (.ci/run runs npm test beside the fault matrix): every build
# into the shared cache and every apt-get runs under a lock of its own (flock, util-linux), and each re-checks
# under it whether another process has finished the job meanwhile. Daemons are never started under a lock.
with_lock() { local name=$1; shift; mkdir -p "$CACHE/locks"; ( flock 9; "$@" ) 9>"$CACHE/locks/$name.lock"; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
apt_ensure() { with_lock apt apt_ensure_locked "$@"; }
apt_ensure_locked() {
  local p missing=(); for p in "$@"; do have_pkg "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || { log "missing Debian packages (${missing[*]}); run as root or install them"; return 1; }
  log "apt-get install ${missing[*]}"
  [ -e "$RUN/.apt-updated" ] || { apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null; touch "$RUN/.apt-updated"; }
  # keep dpkg from starting the distro's own daemons (default postgres cluster, dockerd with a bridge)
  if ! [ -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; fi
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
wait_tcp() { local i; for ((i=0; i<${2:-30}*10; i++)); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
             log "${3:-service} did not open 127.0.0.1:$1 (log: $RUN/log/${3:-service}.log)"; return 1; }
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# Refuses to start a service whose port another process (another run directory) already holds.
need_port() { if port_busy "$1"; then log "port 127.0.0.1:$1 for $2 is already in use (another stack? set MANGO_SERVICES_RUN and the MANGO_*_PORT variables, or stop it)"; return 1; fi; }
running()  { local f=$RUN/pid/$1.pid; [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; }
start_bg() { local n=$1; shift; running "$n" && return 0
             setsid "$@" >"$RUN/log/$n.log" 2>&1 </dev/null & echo $! >"$RUN/pid/$n.pid"; }   # only our own pids are ever killed
stop_bg()  { local f=$RUN/pid/$1.pid p i; [ -f "$f" ] || return 0; p=$(cat "$f")
             if kill -0 "$p" 2>/dev/null; then kill "$p" 2>/dev/null || true; for ((i=0;i<100;i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; kill -9 "$p" 2>/dev/null || true; fi
             rm -f "$f"; }
need_go()  {
  command -v go >/dev/null && return 0
  [ -x /usr/local/go/bin/go ] && { export PATH=/usr/local/go/bin:$PATH; return 0; }
  apt_ensure golang-go; command -v go >/dev/null || { log "no Go toolchain"; return 1; }
}
go_build() { with_lock "go-$1" go_build_locked "$@"; }
go_build_locked() { # go_build <name> <module/pkg@version> [ldflags]  → $BIN/<name>-<version>, linked as $BIN/<name>
  local name=$1 pkg=$2 ldflags=${3:-} ver=${2##*@} want
  want=$BIN/$name-$ver
  if ! [ -x "$want" ]; then need_go; log "building $pkg (cached in $CACHE; first build takes minutes)"
    rm -rf "$CACHE/go/tmpbin-$name"
    GOBIN=$CACHE/go/tmpbin-$name go install -trimpath -ldflags "-s -w $ldflags" "$pkg"
    # The one binary `go install` wrote (named after the package directory, e.g. `server`).
    mv "$CACHE/go/tmpbin-$name"/* "$want"; rm -rf "$CACHE/go/tmpbin-$name"; fi
  ln -sfn "$want" "$BIN/$name"
}

# PostgreSQL 15 (Debian) -------------------------------------------------------------------------
PGBIN=/usr/lib/postgresql/15/bin
pg_install() { [ -x "$PGBIN/initdb" ] || apt_ensure postgresql-15; command -v psql >/dev/null || apt_ensure postgresql-client-15; }
pg_start() {
  pg_install; local d=$DATA/pg/data s=$RUN/pg/sock settings
  mkdir -p "$s" "$DATA/pg"; chown postgres:postgres "$RUN/pg" "$s" "$DATA/pg"; chmod 755 "$RUN" "$DATA"
  if ! [ -s "$d/PG_VERSION" ]; then mkdir -p "$d"; chown -R postgres:postgres "$DATA/pg"
    local initdb_opts=(--no-sync); [ -n "$DURABLE" ] && initdb_opts=(--data-checksums)
    (cd / && runuser -u postgres -- "$PGBIN/initdb" -D "$d" -U postgres -A trust -E UTF8 --locale=C.UTF-8 "${initdb_opts[@]}" >"$RUN/log/pg-initdb.log"); fi
  # Tests trade durability for speed; the local stack a user keeps data in does not.
  settings="-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c wal_level=minimal -c max_wal_senders=0"
  [ -n "$DURABLE" ] && settings="-c fsync=on -c synchronous_commit=on -c full_page_writes=on"
  cd /   # postgres may not be able to enter the caller's directory (a umask-077 checkout)
  if ! runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d" status >/dev/null 2>&1; then
    need_port "$PG_PORT" postgresql || return 1
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$d" -l "$RUN/pg/postgres.log" -w -t 60 -o \
      "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $s $settings -c max_connections=300" start >/dev/null
  fi
  cd - >/dev/null
  local q="psql -h 127.0.0.1 -p $PG_PORT -U postgres -d postgres -v ON_ERROR_STOP=1 -qAt"
  $q -c "select 1 from pg_roles where rolname='mango'" | grep -q 1 || $q -c "create role mango login superuser password 'mango'" >/dev/null
  $q -c "select 1 from pg_database where datname='mango'" | grep -q 1 || $q -c "create database mango owner mango" >/dev/null
}
pg_stop() { if [ -s "$DATA/pg/data/PG_VERSION" ]; then (cd / && runuser -u postgres -- "$PGBIN/pg_ctl" -D "$DATA/pg/data" -m fast -w -t 60 stop >/dev/null 2>&1) || true; fi; }

# Temporal CLI dev server, built from the Go module proxy -----------------------------------------
temporal_install() { go_build temporal "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" "-X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION#v}"; }
temporal_start() {
  temporal_install
  running temporal || need_port "$TEMPORAL_PORT" temporal || return 1
  # Durable: workflows, timers and signals survive a restart (SQLite under the data directory).
  local db=(); [ -n "$DURABLE" ] && { mkdir -p "$DATA/temporal"; db=(--db-filename "$DATA/temporal/temporal.db"); }
  start_bg temporal "$BIN/temporal" server start-dev --headless --ip 127.0.0.1 --port "$TEMPORAL_PORT" "${db[@]}" \
    --http-port 0 --metrics-port 0 --log-level warn --log-format json \
    --dynamic-config-value frontend.enableUpdateWorkflowExecution=true \
    --dynamic-config-value frontend.enableUpdateWorkflowExecutionAsyncAccepted=true \
    --dynamic-config-value frontend.enableExecuteMultiOperation=true \
    --dynamic-config-value system.enableActivityEagerExecution=true \
    --dynamic-config-value matching.numTaskqueueReadPartitions=1 \
    --dynamic-config-value matching.numTaskqueueWritePartitions=1
  wait_tcp "$TEMPORAL_PORT" 60 temporal
  local i; for ((i=0;i<150;i++)); do "$BIN/temporal" operator cluster health --address "127.0.0.1:$TEMPORAL_PORT" >/dev/null 2>&1 && return 0; sleep 0.2; done
  log "temporal not healthy (log: $RUN/log/temporal.log)"; return 1
}
temporal_stop() { stop_bg temporal; }

# S3: versitygw (Apache-2.0), POSIX backend ---------------------------------------------------------
s3_install() { go_build versitygw "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"; }
s3_start() {
  s3_install; mkdir -p "$DATA/s3/data" "$DATA/s3/meta"
  running s3 || need_port "$S3_PORT" s3 || return 1
  # --keep-alive: versitygw otherwise answers every request with Connection: close, so each S3 request
  # (every File upload, part and download) opened a new TCP connection, unlike S3 and MinIO.
  start_bg s3 "$BIN/versitygw" --access "$S3_ACCESS_KEY" --secret "$S3_SECRET_KEY" --region us-east-1 \
    --port "127.0.0.1:$S3_PORT" --health /health --quiet --keep-alive posix --sidecar "$DATA/s3/meta" "$DATA/s3/data"
  wait_tcp "$S3_PORT" 30 s3
}
s3_stop() { stop_bg s3; }

# Docker: our own daemon, no bridge, no iptables -------------------------------------------------------
DOCKER_SOCK=$RUN/docker.sock
# gVisor (Debian's runsc) is declared as the daemon's `runsc` runtime, for MANGO_WORKER_RUNTIME=runsc
# (docs/operator-guide.md "gVisor"): --network=none, since runsc refuses a `--network none` container of a
# bridgeless daemon otherwise ("cannot run with network enabled in root network namespace"), and
# --host-uds=open, so that a sandbox may connect to its Work API socket (else connect() gets EPERM).
docker_install() { command -v dockerd >/dev/null || apt_ensure docker.io; command -v runsc >/dev/null || apt_ensure runsc; }
docker_config() {
  printf '{"runtimes": {"runsc": {"path": "%s", "runtimeArgs": ["--network=none", "--host-uds=open"]}}}\n' \
    "$(command -v runsc)" >"$RUN/docker-daemon.json"
}
docker_start() {
  docker_install; export DOCKER_HOST=unix://$DOCKER_SOCK
  if docker info >/dev/null 2>&1; then
    docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"' ||
      log "the running dockerd ($DOCKER_SOCK) declares no runsc runtime (started before it was added): 'services.sh stop docker' and start it again for MANGO_WORKER_RUNTIME=runsc and its tests"
    return 0
  fi
  mkdir -p "${MANGO_DOCKER_DATA_ROOT:-$CACHE/docker}"; docker_config
  start_bg dockerd dockerd --config-file "$RUN/docker-daemon.json" \
    --data-root "${MANGO_DOCKER_DATA_ROOT:-$CACHE/docker}" --exec-root "$RUN/dx" -H "$DOCKER_HOST" --pidfile "$RUN/dockerd.pid" \
    --bridge=none --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false --userland-proxy=false \
    --storage-driver=overlay2 --log-level=warn
  local i; for ((i=0;i<150;i++)); do docker info >/dev/null 2>&1 && return 0; sleep 0.2; done
  log "dockerd failed: $RUN/log/dockerd.log"; return 1
}
docker_stop() { stop_bg dockerd
  awk -v r="$RUN/dx" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true; }
# The sandbox image: built once from Debian's packages (mmdebstrap, no registry), cached as a tarball under
# $CACHE/images, imported into each daemon's data-root (tools/docker/sandbox-image.sh).
image_build() {
  export DOCKER_HOST=unix://$DOCKER_SOCK; docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 && return 0
  MANGO_SERVICES_CACHE=$CACHE bash "$(dirname "${BASH_SOURCE[0]}")/../docker/sandbox-image.sh" "$BASE_IMAGE"
}
image_install() { docker_start; image_build; }; image_start() { image_install; }; image_stop() { :; }

# Deployment tooling for the chart and Compose tests: helm (Go module proxy) and docker-compose (Debian) ----
HELM_VERSION=${HELM_VERSION:-v3.16.4}
deploytools_install() { go_build helm "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"; command -v docker-compose >/dev/null || apt_ensure docker-compose; kube_decode_build; }
# kube-decode (deployments/test/kube-decode): decodes rendered manifests strictly into the k8s.io/api types and
# (-pod-security LEVEL) evaluates every pod with k8s.io/pod-security-admission;
# built from the Go module proxy, cached by the content key of its sources.
KUBE_DECODE_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/deployments/test/kube-decode
kube_decode_key() { cat "$KUBE_DECODE_SRC"/go.mod "$KUBE_DECODE_SRC"/go.sum "$KUBE_DECODE_SRC"/*.go | sha256sum | cut -c1-16; }
kube_decode_build() { with_lock kube-decode kube_decode_build_locked; }
kube_decode_build_locked() {
  local want; want=$BIN/kube-decode-$(kube_decode_key)
  if ! [ -x "$want" ]; then need_go; log "building kube-decode (k8s.io/api; first build takes minutes)"
    (cd "$KUBE_DECODE_SRC" && go build -trimpath -ldflags "-s -w" -o "$want.tmp" . ) && mv "$want.tmp" "$want"; fi
  ln -sfn "$want" "$BIN/kube-decode"
}
deploytools_start() { deploytools_install; }; deploytools_stop() { :; }

# Observability test tools (Debian): promtool (package prometheus) parses /metrics; tmux drives `mango sessions connect`;
# Chromium (with a text font for readable screenshots) runs the web console's browser test ----
obstools_install() { command -v promtool >/dev/null || apt_ensure prometheus; command -v tmux >/dev/null || apt_ensure tmux
  command -v chromium >/dev/null || apt_ensure chromium fonts-dejavu-core; }
obstools_start() { obstools_install; }; obstools_stop() { :; }
# Toxiproxy (MIT): a real TCP fault proxy (cuts, latency) for the SSE resume tests, built from its Go module ----
TOXIPROXY_VERSION=${TOXIPROXY_VERSION:-v2.5.0}
toxiproxy_install() { go_build toxiproxy-server "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION"; }
# Tests start their own toxiproxy-server on a free port (MANGO_TOXIPROXY_BIN), so there is nothing to run here.
toxiproxy_start() { toxiproxy_install; }; toxiproxy_stop() { :; }

# libfaketime (Debian): a process with its wall clock moved (the fault matrix's clock-skew row) ----
faketime_install() { [ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || apt_ensure libfaketime; }
faketime_start() { faketime_install; }; faketime_stop() { :; }

# nginx: the local ingress of `npm run up` ------------------------------------------------------------
nginx_install() { command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || apt_ensure nginx-light; }

print_env() { cat <<ENV
export MANGO_DATABASE_URL=postgres://mango:mango@127.0.0.1:$PG_PORT/mango
export MANGO_PG_ADMIN_URL=postgres://postgres@127.0.0.1:$PG_PORT/postgres
export MANGO_TEMPORAL_ADDRESS=127.0.0.1:$TEMPORAL_PORT MANGO_TEMPORAL_NAMESPACE=default
export MANGO_S3_ENDPOINT=http://127.0.0.1:$S3_PORT MANGO_S3_ACCESS_KEY=$S3_ACCESS_KEY MANGO_S3_SECRET_KEY=$S3_SECRET_KEY MANGO_S3_REGION=us-east-1
export DOCKER_HOST=unix://$DOCKER_SOCK MANGO_BASE_IMAGE=$BASE_IMAGE
export MANGO_HELM_BIN=$BIN/helm MANGO_KUBE_DECODE_BIN=$BIN/kube-decode MANGO_TEMPORAL_BIN=$BIN/temporal MANGO_TOXIPROXY_BIN=$BIN/toxiproxy-server
ENV
}
# Sourced by tools/dev/up.sh for its helpers: stop here.
if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then return 0; fi
action=${1:-start}; what=${*:2}; what=${what:-all}; [ "$what" = all ] && what="pg temporal s3 docker image deploytools obstools toxiproxy"
case "$action" in
  install|start|stop) for p in $what; do "${p}_${action}"; done ;;
  env) print_env ;;
  *) echo "usage: $0 {install|start|stop|env} [pg|temporal|s3|docker|image|deploytools|obstools|toxiproxy|all]" >&2; exit 2 ;;
esac
