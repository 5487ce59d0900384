#!/usr/bin/env bash
# tools/release/images.sh <version> <outdir>: Mango's two images for one release, as `docker save` archives.
# Builds mango-control-plane:<version> and mango-sandbox:<version> from deployments/docker/*.Dockerfile with
# tools/docker/build-images.sh (no registry; labels name this commit), then writes
#   <outdir>/mango-control-plane-<version>.tar.gz
#   <outdir>/mango-sandbox-<version>.tar.gz
# (gzip of `docker save <image>:<version>`: `docker load -i <file>` restores the tagged image) and prints
# one line per archive: `<file> <bytes> bytes (<MiB> MiB, image <uncompressed MiB> MiB)`.
# <version> must be the root package.json's: the images, compose.yaml and the supervisor's default
# sandbox image all carry that one (bump it first). DOCKER_HOST selects the daemon.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 <version> <outdir>" >&2; exit 2; }
VERSION=$1 OUT=$2
PKG_VERSION=$(cd "$ROOT" && node -p 'require("./package.json").version')
[ "$VERSION" = "$PKG_VERSION" ] ||
  { echo "images.sh: version $VERSION is not package.json's $PKG_VERSION (bump package.json first)" >&2; exit 2; }
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
eval "$(bash "$ROOT/tools/ci/services.sh" env)"
# A release build always writes its own labels (revision), even when an image of the same contents exists.
MANGO_IMAGE_REBUILD=1 bash "$ROOT/tools/docker/build-images.sh" all >/dev/null
for image in mango-control-plane mango-sandbox; do
  file=$OUT/$image-$VERSION.tar.gz
  docker save "$image:$VERSION" | gzip -6 >"$file.tmp"; mv "$file.tmp" "$file"
  bytes=$(stat -c %s "$file"); raw=$(docker image inspect -f '{{.Size}}' "$image:$VERSION")
  printf '%s %s bytes (%s MiB, image %s MiB)\n' "$(basename "$file")" "$bytes" \
    "$(( (bytes + 524288) / 1048576 ))" "$(( (raw + 524288) / 1048576 ))"
done
