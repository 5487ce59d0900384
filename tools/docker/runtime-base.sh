#!/usr/bin/env bash
# Builds the control-plane image's base without a registry:
#   tools/docker/runtime-base.sh [tag]      (default mango-runtime-base:<key>; DOCKER_HOST selects the daemon)
# prints the tag. A Debian bookworm root filesystem from Debian's own packages (mmdebstrap, `essential`
# variant plus deployments/docker/runtime-packages.txt: no compiler) and this machine's Node binary (no npm),
# with a `mango` user (uid/gid 10001, home /tmp), cached as a tarball under $MANGO_SERVICES_CACHE/images
# keyed by the package list, the Node version and this script's build function, then `docker import`ed.
# Operators with a registry may use any image with Node >= 20.19 instead (node:20-bookworm-slim):
# deployments/docker/control-plane.Dockerfile takes it as BASE_IMAGE.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${MANGO_SERVICES_CACHE:-${HOME:-/root}/.cache/mango-services}
LIST=$ROOT/deployments/docker/runtime-packages.txt
log() { printf '[runtime-base] %s\n' "$*" >&2; }
NODE=$(readlink -f "$(command -v node)")
NODE_VERSION=$("$NODE" -p process.versions.node)
packages=$(grep -v '^\s*#' "$LIST" | grep -v '^\s*$' | sort -u | paste -sd, -)
key=$( { echo "$packages"; echo "$NODE_VERSION"; sed -n '/^build_rootfs()/,/^}/p' "$0"; } | sha256sum | cut -c1-16)
TAG=${1:-mango-runtime-base:$key}
TARBALL=$CACHE/images/runtime-$key.tar

build_rootfs() {
  command -v mmdebstrap >/dev/null || {
    [ "$(id -u)" = 0 ] || { log "mmdebstrap is missing: apt-get install mmdebstrap (as root)"; return 1; }
    log "apt-get install mmdebstrap"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends mmdebstrap >/dev/null 2>&1 ||
      { apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null; DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends mmdebstrap >/dev/null; }
  }
  mkdir -p "$CACHE/images"; local tmp=$TARBALL.tmp-$$
  log "building the control-plane root filesystem from Debian bookworm (cached in $CACHE/images)"
  # The customize hooks run on the host with the root filesystem at $1.
  mmdebstrap --variant=essential --mode=auto --format=tar --include="$packages" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook="install -m 0755 '$NODE' \"\$1/usr/local/bin/node\"" \
    --customize-hook='echo "mango:x:10001:10001:mango:/tmp:/usr/sbin/nologin" >>"$1/etc/passwd" && echo "mango:x:10001:" >>"$1/etc/group"' \
    --customize-hook='chmod 1777 "$1/tmp"' \
    --customize-hook='rm -rf "$1/var/cache/apt/archives"/*.deb "$1/var/lib/apt/lists"/* "$1/var/cache/debconf"/*-old' \
    bookworm "$tmp" >"$CACHE/images/build-runtime-$key.log" 2>&1 || { log "mmdebstrap failed: $CACHE/images/build-runtime-$key.log"; rm -rf "$tmp"; return 1; }
  mv "$tmp" "$TARBALL"
}

if docker image inspect "$TAG" >/dev/null 2>&1; then echo "$TAG"; exit 0; fi
# One build at a time per cache: a second builder waits for the first's tarball.
if ! [ -s "$TARBALL" ]; then
  mkdir -p "$CACHE/locks"
  ( flock 9; [ -s "$TARBALL" ] || build_rootfs ) 9>"$CACHE/locks/runtime-base.lock"
fi
log "importing $TAG"
docker import -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8' "$TARBALL" "$TAG" >/dev/null
echo "$TAG"
