# The Mango control plane: apps/api, apps/files, apps/orchestrator, the Docker supervisor (`mango-worker
# docker`) and the operator CLI (`mango`), with the web console's bundle. No compiler, no npm, no sources
# beyond what the processes load; runs as uid 10001 and needs nothing writable but /tmp, so it runs with a
# read-only root filesystem and a tmpfs (or emptyDir) at /tmp.
#
# The build context is the repository root, of which the root .dockerignore sends only dist/images: the files
# tools/docker/build-images.sh stages there (it is the build CI runs; `build-images.sh stage` stages only):
#   dist/images/control-plane/deps/node_modules   production dependencies (`npm prune --omit=dev` of the lock
#                                                 file's tree, other platforms' prebuilt binaries removed)
#   dist/images/control-plane/app/                the runtime sources (apps/{api,files,orchestrator,supervisor}/src,
#                                                 libs, tools/cli, tools/runtime, tsconfig.base.json, package.json)
#                                                 and the console bundle (dist/apps/console)
#   dist/images/control-plane/bin/                mango, mango-server, mango-worker (links into tools/cli/bin)
# Build both images with:  bash tools/docker/build-images.sh
# or, once staged:  docker build -f deployments/docker/control-plane.Dockerfile \
#                     --build-arg BASE_IMAGE=<base> --build-arg VERSION=<version> -t mango-control-plane:<version> .
# BASE_IMAGE: any image with Node >= 20.19 and nothing else Mango needs; build-images.sh passes the one
# tools/docker/runtime-base.sh makes from Debian's packages (no registry), node:20-bookworm-slim works too.
ARG BASE_IMAGE=node:20-bookworm-slim
FROM ${BASE_IMAGE}
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
ARG SOURCE=unknown
# The dependencies first: a layer that changes only with the lock file.
COPY dist/images/control-plane/deps/ /opt/mango/
COPY dist/images/control-plane/app/ /opt/mango/
COPY dist/images/control-plane/bin/ /usr/local/bin/
# HOME and the SWC transform cache (the processes run their TypeScript through @swc-node/register) in /tmp.
# The supervisor starts Work containers from the sandbox image of the same version unless told otherwise.
ENV NODE_ENV=production \
    HOME=/tmp \
    SWC_NODE_CACHE_DIR=/tmp/swc-node \
    MANGO_WORKER_IMAGE=mango-sandbox:${VERSION}
WORKDIR /opt/mango
USER 10001:10001
CMD ["mango-server", "api"]
# The labels last: a new revision re-labels the image without copying its layers again.
LABEL org.opencontainers.image.title="mango-control-plane" \
      org.opencontainers.image.description="Mango control plane: api, files, orchestrator, Docker supervisor and the mango CLI" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0"
