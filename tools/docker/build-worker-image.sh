#!/usr/bin/env bash
# Builds the worker image without any registry: the locally imported base image (bash + the machine's
# node, tools/ci/services.sh image) plus this repository and its production node_modules at /opt/mango.
#   tools/docker/build-worker-image.sh [tag]     (default mango-self-hosted-worker:local)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TAG=${1:-mango-self-hosted-worker:local}
eval "$(bash "$ROOT/tools/ci/services.sh" env)"
bash "$ROOT/tools/ci/services.sh" start image >&2
ctx=$(mktemp -d); trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/opt/mango"
git -C "$ROOT" ls-files -z | (cd "$ROOT" && xargs -0 cp --parents -t "$ctx/opt/mango")
# The web console's static bundle (apps/api serves it at /console), built with the dev toolchain here.
(cd "$ROOT" && npx vite build --config apps/console/vite.config.mts --logLevel error >&2)
mkdir -p "$ctx/opt/mango/dist/apps" && cp -a "$ROOT/dist/apps/console" "$ctx/opt/mango/dist/apps/console"
# Production dependencies, from the same lock file, without the network when the npm cache is warm: a
# layer of their own, built once per lock file, base image and Node (about 800 MB to copy and prune), so a
# change to the sources rebuilds only the few MB above it.
deps_key=$( (cat "$ROOT/package-lock.json" "$ROOT/package.json"; echo "$MANGO_BASE_IMAGE"; node --version) | sha256sum | cut -c1-16)
DEPS=mango-worker-deps:$deps_key
if ! docker image inspect "$DEPS" >/dev/null 2>&1; then
  dctx=$(mktemp -d); trap 'rm -rf "$ctx" "$dctx"' EXIT
  mkdir -p "$dctx/opt/mango"
  cp "$ROOT/package.json" "$ROOT/package-lock.json" "$dctx/opt/mango/"
  cp -a "$ROOT/node_modules" "$dctx/opt/mango/node_modules"
  (cd "$dctx/opt/mango" && npm prune --omit=dev --no-audit --no-fund >/dev/null 2>&1 || true)
  rm "$dctx/opt/mango/package.json" "$dctx/opt/mango/package-lock.json"
  printf 'FROM %s\nCOPY opt /opt\n' "$MANGO_BASE_IMAGE" >"$dctx/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q -t "$DEPS" "$dctx" >/dev/null 2>&1 || docker build -q -t "$DEPS" "$dctx" >&2
  rm -rf "$dctx"
fi
# The item runner's compiler and the CLI resolve their dependencies from the build context.
ln -s "$ROOT/node_modules" "$ctx/opt/mango/node_modules"
# The item runner precompiled to plain JavaScript (containers start Node without SWC); the image declares it.
entry=$(cd "$ROOT" && node -r ./tools/runtime/register.js -e \
  "require('./apps/supervisor/src/compile-runner.ts').compileItemRunner(process.argv[1]).then((r) => { if (r.notBundled) console.error('item runner not bundled: ' + r.notBundled); process.stdout.write(r.entry); })" \
  "$ctx/opt/mango")
mkdir -p "$ctx/usr/local/bin"
ln -s /opt/mango/tools/cli/bin/mango-worker.js "$ctx/usr/local/bin/mango-worker"
ln -s /opt/mango/tools/cli/bin/mango.js "$ctx/usr/local/bin/mango"
ln -s /opt/mango/tools/cli/bin/mango-server.js "$ctx/usr/local/bin/mango-server"
rm "$ctx/opt/mango/node_modules" # the deps layer holds the real ones
cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $DEPS
COPY opt /opt
COPY usr /usr
ENV MANGO_WORKER_IMAGE=$TAG MANGO_ITEM_ENTRY=/opt/mango/$entry
ENTRYPOINT ["/usr/local/bin/node", "/opt/mango/tools/cli/bin/mango-worker.js"]
CMD ["docker"]
DOCKERFILE
DOCKER_BUILDKIT=0 docker build -q -t "$TAG" "$ctx" >/dev/null 2>&1 || docker build -q -t "$TAG" "$ctx"
echo "$TAG"
