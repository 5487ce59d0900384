#!/usr/bin/env bash
# Builds every image deployments/compose/compose.yaml needs without a registry, each tagged by a content key
# (the sha256 of its inputs) and skipped when the daemon already has that tag, so a warm run builds nothing:
#   tools/docker/compose-images.sh            (DOCKER_HOST selects the daemon)
# prints the image variables compose.yaml reads, one `NAME=tag` a line:
#   MANGO_IMAGE           the control plane: api, files, orchestrator, supervisor, CLI (mango-control-plane)
#   MANGO_SANDBOX_IMAGE   the image Work containers run (mango-sandbox); both from deployments/docker/*.Dockerfile
#                         as tools/docker/build-images.sh builds them
#   MANGO_POSTGRES_IMAGE  Debian bookworm's postgresql-15 with an entrypoint that honours the official
#                         image's POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB and `postgres <args>`
#   MANGO_NGINX_IMAGE     Debian's nginx-light
#   MANGO_TEMPORAL_IMAGE  Temporal's server (go.temporal.io/server) that tools/ci/services.sh builds from the Go
#                         module proxy, on PostgreSQL (its module's config/docker.yaml), with the entrypoint
#                         tools/docker/compose/temporal-entrypoint.sh
#   MANGO_TEMPORAL_ADMIN_IMAGE  the same image: temporal-sql-tool with the PostgreSQL schema and the temporal CLI
#   MANGO_S3_IMAGE        versitygw, likewise
# The Debian userland of the last four is one mmdebstrap root filesystem (Debian's own packages), cached as a
# tarball under $MANGO_SERVICES_CACHE/images like the sandbox image's; the first build downloads ~60 MB.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${MANGO_SERVICES_CACHE:-${HOME:-/root}/.cache/mango-services}
log() { printf '[compose-images] %s\n' "$*" >&2; }
have() { docker image inspect "$1" >/dev/null 2>&1; }
SERVICES="bash $ROOT/tools/ci/services.sh"

# The cached Go binaries (built once from the Go module proxy; nothing is rebuilt when they exist).
$SERVICES install temporal >&2
$SERVICES install temporalserver >&2
$SERVICES install s3 >&2
BIN=$CACHE/bin
TEMPORAL_BIN=$(readlink -f "$BIN/temporal"); VERSITYGW_BIN=$(readlink -f "$BIN/versitygw")
SERVER_BIN=$(readlink -f "$BIN/temporal-server"); SQL_TOOL_BIN=$(readlink -f "$BIN/temporal-sql-tool")
# The server's module (downloaded by its build): the configuration template and the SQL schema.
SERVER_MOD=$CACHE/go/mod/go.temporal.io/server@${SERVER_BIN##*-}

# 1. The services' Debian root filesystem.
PACKAGES=bash,coreutils,procps,ca-certificates,curl,postgresql-15,nginx-light
key=$( { echo "$PACKAGES"; sed -n '/^build_rootfs()/,/^}/p' "$0"; } | sha256sum | cut -c1-16)
TARBALL=$CACHE/images/compose-services-$key.tar
BASE=mango-compose-base:$key
build_rootfs() {
  command -v mmdebstrap >/dev/null || {
    log "apt-get install mmdebstrap"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends mmdebstrap >/dev/null 2>&1 ||
      { apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null; DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends mmdebstrap >/dev/null; }
  }
  mkdir -p "$CACHE/images"; local tmp=$TARBALL.tmp-$$
  log "building the Compose services' root filesystem from Debian bookworm (cached in $CACHE/images)"
  mmdebstrap --variant=essential --mode=auto --format=tar --include="$PACKAGES" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='rm -rf "$1/var/lib/postgresql/15/main" "$1/etc/postgresql/15/main"' \
    --customize-hook='mkdir -p "$1/var/run/postgresql" "$1/var/lib/postgresql/data" "$1/data" "$1/meta" && chown -R postgres:postgres "$1/var/run/postgresql" "$1/var/lib/postgresql" && chmod 1777 "$1/tmp"' \
    --customize-hook='rm -f "$1/etc/nginx/sites-enabled/default"' \
    --customize-hook='rm -rf "$1/var/cache/apt/archives"/*.deb "$1/var/lib/apt/lists"/*' \
    bookworm "$tmp" >"$CACHE/images/build-compose-$key.log" 2>&1 ||
    { log "mmdebstrap failed: $CACHE/images/build-compose-$key.log"; rm -rf "$tmp"; return 1; }
  mv "$tmp" "$TARBALL"
}
if ! have "$BASE"; then
  [ -s "$TARBALL" ] || build_rootfs
  log "importing $BASE"
  docker import -c 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8' \
    "$TARBALL" "$BASE" >/dev/null
fi

# build_image <repository> <context dir>: tags <repository>:<key of the base, the context's files>.
build_image() {
  local repo=$1 ctx=$2 k tag
  k=$( { echo "$BASE"; (cd "$ctx" && find . -type f -print0 | sort -z | xargs -0 sha256sum); } | sha256sum | cut -c1-16)
  tag=$repo:$k
  if ! have "$tag"; then log "building $tag"
    DOCKER_BUILDKIT=0 docker build -q -t "$tag" "$ctx" >/dev/null 2>&1 || DOCKER_BUILDKIT=0 docker build -q -t "$tag" "$ctx" >&2; fi
  echo "$tag"
}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# 2. PostgreSQL.
mkdir -p "$work/postgres"; cp "$ROOT/tools/docker/compose/postgres-entrypoint.sh" "$work/postgres/entrypoint.sh"
cat >"$work/postgres/Dockerfile" <<DOCKERFILE
FROM $BASE
COPY entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PGDATA=/var/lib/postgresql/data
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]
DOCKERFILE
pg=$(build_image mango-compose-postgres "$work/postgres")

# 3. nginx (the configuration is mounted by compose.yaml).
mkdir -p "$work/nginx"
cat >"$work/nginx/Dockerfile" <<DOCKERFILE
FROM $BASE
CMD ["nginx", "-g", "daemon off; error_log stderr warn;"]
DOCKERFILE
nginx=$(build_image mango-compose-nginx "$work/nginx")

# 4. Temporal and versitygw: the cached binaries on the same base (the binary's version names its file).
mkdir -p "$work/temporal" "$work/s3"
cp "$TEMPORAL_BIN" "$work/temporal/temporal"; cp "$VERSITYGW_BIN" "$work/s3/versitygw"
printf 'FROM %s\nCOPY temporal /usr/local/bin/temporal\nENTRYPOINT ["/usr/local/bin/temporal"]\n' "$BASE" >"$work/temporal/Dockerfile"
printf 'FROM %s\nCOPY versitygw /usr/local/bin/versitygw\nENTRYPOINT ["/usr/local/bin/versitygw"]\n' "$BASE" >"$work/s3/Dockerfile"
temporal=$(build_image mango-compose-temporal "$work/temporal")
mkdir -p "$work/temporal-server/config/dynamicconfig" "$work/temporal-server/schema/postgresql"
cp "$SERVER_BIN" "$work/temporal-server/temporal-server"; cp "$SQL_TOOL_BIN" "$work/temporal-server/temporal-sql-tool"
cp "$TEMPORAL_BIN" "$work/temporal-server/temporal"
install -m 0755 "$ROOT/tools/docker/compose/temporal-entrypoint.sh" "$work/temporal-server/entrypoint.sh"
cp "$SERVER_MOD/config/docker.yaml" "$work/temporal-server/config/docker.yaml"
cp "$ROOT/deployments/compose/temporal-dynamicconfig.yaml" "$work/temporal-server/config/dynamicconfig/docker.yaml"
cp -r "$SERVER_MOD/schema/postgresql/v12" "$work/temporal-server/schema/postgresql/v12"
find "$work/temporal-server/schema" -name '*.go' -delete; chmod -R a+rX,u+w "$work/temporal-server"
cat >"$work/temporal-server/Dockerfile" <<DOCKERFILE
FROM $BASE
# entrypoint.sh is copied with mode 0755 (COPY keeps the context's modes).
COPY temporal-server temporal-sql-tool temporal entrypoint.sh /usr/local/bin/
COPY config /etc/temporal/config
COPY schema /etc/temporal/schema
WORKDIR /etc/temporal
ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]
DOCKERFILE
temporal_server=$(build_image mango-compose-temporal-server "$work/temporal-server")
s3=$(build_image mango-compose-versitygw "$work/s3")

# 5. Mango: the control-plane and sandbox images, content-keyed by tools/docker/build-images.sh (a warm run
# builds nothing).
mango=$(bash "$ROOT/tools/docker/build-images.sh" all)
cp_image=$(sed -n 's/^MANGO_CONTROL_PLANE_IMAGE=//p' <<<"$mango"); sandbox_image=$(sed -n 's/^MANGO_SANDBOX_IMAGE=//p' <<<"$mango")

printf 'MANGO_IMAGE=%s\nMANGO_SANDBOX_IMAGE=%s\nMANGO_POSTGRES_IMAGE=%s\nMANGO_NGINX_IMAGE=%s\nMANGO_TEMPORAL_IMAGE=%s\nMANGO_TEMPORAL_ADMIN_IMAGE=%s\nMANGO_S3_IMAGE=%s\n' \
  "$cp_image" "$sandbox_image" "$pg" "$nginx" "$temporal_server" "$temporal_server" "$s3"
