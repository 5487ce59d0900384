#!/usr/bin/env bash
# Builds the Mango sandbox image without a registry:
#   tools/docker/sandbox-image.sh [tag]      (default mango-sandbox:v3; DOCKER_HOST selects the daemon)
# A Debian bookworm root filesystem from Debian's own packages (mmdebstrap; the list is
# deployments/docker/sandbox-packages.txt) plus this machine's Node (>= 20.19) and npm, a
# `mango` user (uid 1000) and /workspace, cached as a tarball under $MANGO_SERVICES_CACHE/images (keyed by
# the package list and the Node version), then `docker import`ed. The first build downloads ~150 MB of
# packages and takes a few minutes; later imports take seconds.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TAG=${1:-mango-sandbox:v3}
CACHE=${MANGO_SERVICES_CACHE:-${HOME:-/root}/.cache/mango-services}
LIST=$ROOT/deployments/docker/sandbox-packages.txt
log() { printf '[sandbox-image] %s\n' "$*" >&2; }
NODE=$(readlink -f "$(command -v node)")
NODE_VERSION=$("$NODE" -p process.versions.node)
packages=$(grep -v '^\s*#' "$LIST" | grep -v '^\s*$' | sort -u | paste -sd, -)
key=$( { echo "$packages"; echo "$NODE_VERSION"; sed -n '/^build_rootfs()/,/^}/p' "$0"; } | sha256sum | cut -c1-16)
TARBALL=$CACHE/images/sandbox-$key.tar

build_rootfs() {
  command -v mmdebstrap >/dev/null || {
    [ "$(id -u)" = 0 ] || { log "mmdebstrap is missing: apt-get install mmdebstrap (as root)"; return 1; }
    log "apt-get install mmdebstrap"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends mmdebstrap >/dev/null 2>&1 ||
      { apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null; DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends mmdebstrap >/dev/null; }
  }
  local npm_dir; npm_dir=$(dirname "$NODE")/../lib/node_modules/npm
  mkdir -p "$CACHE/images"; local tmp=$TARBALL.tmp-$$
  log "building the sandbox root filesystem from Debian bookworm (cached in $CACHE/images)"
  # The customize hook runs on the host with the root filesystem at $1.
  mmdebstrap --variant=essential --mode=auto --format=tar --include="$packages" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook="install -m 0755 '$NODE' \"\$1/usr/local/bin/node\"" \
    --customize-hook="if [ -d '$npm_dir' ]; then mkdir -p \"\$1/usr/local/lib/node_modules\" && cp -a '$npm_dir' \"\$1/usr/local/lib/node_modules/npm\" && ln -sf ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/local/bin/npm\" && ln -sf ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/local/bin/npx\"; fi" \
    --customize-hook='echo "mango:x:1000:1000:mango:/home/mango:/bin/bash" >>"$1/etc/passwd" && echo "mango:x:1000:" >>"$1/etc/group"' \
    --customize-hook='mkdir -p "$1/workspace" "$1/home/mango" && chown 1000:1000 "$1/workspace" "$1/home/mango" && chmod 1777 "$1/tmp"' \
    --customize-hook='rm -rf "$1/var/cache/apt/archives"/*.deb "$1/var/lib/apt/lists"/*' \
    bookworm "$tmp" >"$CACHE/images/build-$key.log" 2>&1 || { log "mmdebstrap failed: $CACHE/images/build-$key.log"; rm -rf "$tmp"; return 1; }
  mv "$tmp" "$TARBALL"
}

# One build at a time per cache (two stacks starting at once on a fresh machine): the second waits for the
# first's tarball instead of building its own.
if ! [ -s "$TARBALL" ]; then
  mkdir -p "$CACHE/locks"
  ( flock 9; [ -s "$TARBALL" ] || build_rootfs ) 9>"$CACHE/locks/sandbox-image.lock"
fi
log "importing $TAG"
docker import -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8' -c 'WORKDIR /workspace' \
  -c 'CMD ["/bin/bash"]' "$TARBALL" "$TAG" >/dev/null
echo "$TAG"
