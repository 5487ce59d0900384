#!/usr/bin/env bash
# Builds Mango's two images from deployments/docker/*.Dockerfile without a registry (CI, the Compose test and
# the release script run exactly this):
#   tools/docker/build-images.sh [control-plane|sandbox|all|stage]   (default all; DOCKER_HOST selects the daemon)
# stages each image's files under dist/images/<image>/ and runs, from the repository root,
#   docker build -f deployments/docker/<image>.Dockerfile --build-arg BASE_IMAGE=… --build-arg VERSION=… .
# (the root .dockerignore sends only dist/images; compose.yaml's `build:` is the same build); `stage` stages
# both and builds nothing. It prints one `NAME=tag` line per image built:
#   MANGO_CONTROL_PLANE_IMAGE=mango-control-plane:<content key>
#   MANGO_SANDBOX_IMAGE=mango-sandbox:<content key>
# Each image is also tagged with the version of the root package.json (mango-control-plane:0.1.0,
# mango-sandbox:0.1.0): the names the Helm chart, compose.yaml and the supervisor's default use. The content
# key (the sha256 of the staged context, the base image, the Dockerfile and the version) makes a warm run a
# no-op; the revision label then names the commit that first built those contents.
#
# Bases (each a build argument of its Dockerfile):
#   MANGO_CONTROL_PLANE_BASE  default: tools/docker/runtime-base.sh's image (Debian's packages + this Node)
#   MANGO_SANDBOX_BASE        default: $MANGO_BASE_IMAGE (mango-sandbox:v3, tools/docker/sandbox-image.sh)
# Other settings: MANGO_IMAGE_REVISION (default: git HEAD, `-dirty` when tracked files changed),
# MANGO_IMAGE_SOURCE (default: package.json `repository.url`), MANGO_IMAGE_REBUILD=1 (build even when an
# image of the same contents exists, so its labels are this build's: tools/release/images.sh).
#
# The builds use the classic builder (DOCKER_BUILDKIT=0: no buildx here) and no network: the files are
# staged on this machine — production node_modules are this checkout's, pruned with `npm prune --omit=dev`
# in a cached copy (no registry is asked), the web console is built with `nx run console:build`, the item
# runner precompiled by apps/supervisor/src/compile-runner.ts — and the Dockerfiles only COPY.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WHAT=${1:-all}
case "$WHAT" in control-plane|sandbox|all|stage) ;; *) echo "usage: $0 [control-plane|sandbox|all|stage]" >&2; exit 2 ;; esac
CACHE=${MANGO_SERVICES_CACHE:-${HOME:-/root}/.cache/mango-services}
log() { printf '[build-images] %s\n' "$*" >&2; }
have() { docker image inspect "$1" >/dev/null 2>&1; }
eval "$(bash "$ROOT/tools/ci/services.sh" env)"
cd "$ROOT"

VERSION=$(node -p 'require("./package.json").version')
REVISION=${MANGO_IMAGE_REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo -dirty)}
SOURCE=${MANGO_IMAGE_SOURCE:-$(node -p 'const r=require("./package.json").repository; (typeof r==="string"?r:r&&r.url)||"unknown"')}
ARCH=$(node -p process.arch)   # x64 | arm64
case "$ARCH" in x64) CORE_ARCH=x86_64; KOFFI=linux_x64 ;; arm64) CORE_ARCH=aarch64; KOFFI=linux_arm64 ;;
  *) log "unsupported architecture $ARCH"; exit 1 ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/mango-images-XXXXXX"); trap 'rm -rf "$work"' EXIT
STAGE=$ROOT/dist/images

# Production dependencies: a copy of this checkout's node_modules pruned to the lock file's production tree,
# less the prebuilt binaries of other platforms (Temporal's core bridge ships five, ~27 MB each; koffi
# twenty), cached per lock file, Node and architecture. Nothing is downloaded.
deps_dir() {
  local key dir
  key=$( { cat package.json package-lock.json tools/cli/package.json; node --version; echo "$ARCH"
           sed -n '/^prune_deps()/,/^}/p' "$0"; } | sha256sum | cut -c1-16)
  dir=$CACHE/images/control-plane-deps-$key
  if ! [ -d "$dir" ]; then mkdir -p "$CACHE/locks"
    ( flock 9; [ -d "$dir" ] || prune_deps "$dir" ) 9>"$CACHE/locks/control-plane-deps.lock"; fi
  echo "$dir"
}
prune_deps() {
  local dir=$1 tmp=$1.tmp-$$
  log "pruning production node_modules (cached in $dir)"
  rm -rf "$tmp"; mkdir -p "$tmp/tools/cli"
  cp package.json package-lock.json "$tmp/"; cp tools/cli/package.json "$tmp/tools/cli/"
  cp -a node_modules "$tmp/node_modules"
  (cd "$tmp" && npm prune --omit=dev --offline --no-audit --no-fund --ignore-scripts >/dev/null 2>&1)
  find "$tmp/node_modules/@temporalio/core-bridge/releases" -mindepth 1 -maxdepth 1 ! -name "$CORE_ARCH-unknown-linux-gnu" -exec rm -rf {} +
  find "$tmp/node_modules/koffi/build/koffi" -mindepth 1 -maxdepth 1 ! -name "$KOFFI" -exec rm -rf {} +
  rm -rf "$tmp/node_modules/.cache" "$tmp/node_modules/.package-lock.json"
  chmod -R a+rX,go-w "$tmp/node_modules"
  mkdir -p "$tmp/out"; mv "$tmp/node_modules" "$tmp/out/node_modules"; mv "$tmp/out" "$dir"; rm -rf "$tmp"
}

# content_key <dir> <extra…>: the sha256 of every file and link under <dir> (path, mode, content or target)
# and the extra strings.
content_key() {
  local dir=$1; shift
  { printf '%s\n' "$@"
    (cd "$dir" && find . \( -type f -o -type l \) -printf '%p %m %l\n' | LC_ALL=C sort)
    (cd "$dir" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum)
  } | sha256sum | cut -c1-16
}

# build <repository> <Dockerfile> <base> <key>: tags <repository>:<key> and :<version>.
build() {
  local repo=$1 dockerfile=$2 base=$3 key=$4
  [ "$WHAT" = stage ] && return 0
  if [ -n "${MANGO_IMAGE_REBUILD:-}" ] || ! have "$repo:$key"; then
    log "building $repo:$key ($repo:$VERSION) from $dockerfile on $base"
    DOCKER_BUILDKIT=0 docker build -q -f "$dockerfile" --build-arg "BASE_IMAGE=$base" \
      --build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION" --build-arg "SOURCE=$SOURCE" \
      -t "$repo:$key" "$ROOT" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; return 1; }
  fi
  docker tag "$repo:$key" "$repo:$VERSION"
  # Older content-keyed builds go; one a container still uses stays (rmi refuses).
  docker image ls --format '{{.Repository}}:{{.Tag}}' "$repo" | grep -E ':[0-9a-f]{16}$' | grep -vx "$repo:$key" |
    xargs -r docker rmi >/dev/null 2>&1 || true
}

control_plane() {
  local base ctx=$STAGE/control-plane deps key
  base=${MANGO_CONTROL_PLANE_BASE:-$(bash "$ROOT/tools/docker/runtime-base.sh")}
  deps=$(deps_dir)
  rm -rf "$ctx"; mkdir -p "$ctx/app/dist/apps" "$ctx/bin"
  cp -al "$deps" "$ctx/deps"
  # The runtime sources: what the four processes and the CLI load (no tests, fixtures, test support, the
  # other SDKs, docs or deployment files).
  git ls-files -z -- package.json tsconfig.base.json LICENSE apps/api/src apps/files/src apps/orchestrator/src \
      apps/supervisor/src libs tools/cli/bin tools/cli/src tools/cli/package.json tools/runtime \
      ':!libs/testing' ':!libs/sdk/python' ':!libs/sdk/go' ':!*.spec.ts' ':!*-spec.ts' ':!*.fixtures.ts' \
      ':!**/test/**' ':!**/jest.config.js' ':!**/project.json' ':!**/tsconfig.json' ':!**/tsconfig.*.json' \
      ':!**/eslint.config.*' | xargs -0 cp --parents -t "$ctx/app"
  log "building the web console (nx run console:build)"
  NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false npx nx run console:build --outputStyle=stream >"$work/console.log" 2>&1 ||
    { cat "$work/console.log" >&2; return 1; }
  cp -a dist/apps/console "$ctx/app/dist/apps/console"
  chmod -R a+rX,go-w "$ctx/app"
  for b in mango mango-server mango-worker; do ln -s "/opt/mango/tools/cli/bin/$b.js" "$ctx/bin/$b"; done
  key=$(content_key "$ctx/app" "$deps" "$(docker image inspect -f '{{.Id}}' "$base")" "$VERSION" \
    "$(cat deployments/docker/control-plane.Dockerfile)")
  build mango-control-plane deployments/docker/control-plane.Dockerfile "$base" "$key"
  [ "$WHAT" = stage ] || echo "MANGO_CONTROL_PLANE_IMAGE=mango-control-plane:$key"
}

sandbox() {
  local base=${MANGO_SANDBOX_BASE:-$MANGO_BASE_IMAGE} ctx=$STAGE/sandbox deps entry dir key p
  have "$base" || bash "$ROOT/tools/ci/services.sh" start image >&2
  deps=$(deps_dir)
  # The item runner bundle (dist/item-runner/<hash> of this checkout, as development mode builds it).
  entry=$(node -r ./tools/runtime/register.js -e "
    require('./apps/supervisor/src/compile-runner.ts').compileItemRunner(process.argv[1]).then((r) => {
      if (r.notBundled) { console.error('item runner not bundled: ' + r.notBundled); process.exit(1); }
      process.stdout.write(r.entry);
    })" "$ROOT")
  dir=$(dirname "$entry")
  rm -rf "$ctx"; mkdir -p "$ctx/app/dist/item-runner" "$ctx/app/node_modules/@lydell"
  cp -a "$dir" "$ctx/app/dist/item-runner/"
  ln -s "$(basename "$dir")" "$ctx/app/dist/item-runner/current"
  # The native packages the bundle leaves to node_modules (NATIVE_PACKAGES in compile-runner.ts).
  for p in koffi @lydell/node-pty "@lydell/node-pty-linux-$ARCH"; do cp -a "$deps/node_modules/$p" "$ctx/app/node_modules/$p"; done
  cp LICENSE "$ctx/app/LICENSE"
  chmod -R a+rX,go-w "$ctx/app"
  key=$(content_key "$ctx/app" "$(docker image inspect -f '{{.Id}}' "$base")" "$VERSION" \
    "$(cat deployments/docker/sandbox.Dockerfile)")
  build mango-sandbox deployments/docker/sandbox.Dockerfile "$base" "$key"
  [ "$WHAT" = stage ] || echo "MANGO_SANDBOX_IMAGE=mango-sandbox:$key"
}

case "$WHAT" in
  control-plane) control_plane ;;
  sandbox) sandbox ;;
  all|stage) control_plane; sandbox ;;
esac
