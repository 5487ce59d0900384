# The Mango sandbox: the image every Work container runs (`MANGO_WORKER_IMAGE`). The sandbox userland
# (Debian bookworm's packages listed in sandbox-packages.txt, Node, a `mango` user uid 1000 and /workspace)
# plus the item runner, precompiled to one bundle with its V8 code cache, and the two native packages it
# loads at run time (koffi, @lydell/node-pty). The image declares the runner as MANGO_ITEM_ENTRY; the
# supervisor reads it and starts each container with `node <entry>` as uid 1000 on a read-only root.
#
# The build context is the repository root, of which the root .dockerignore sends only dist/images: the files
# tools/docker/build-images.sh stages there (it is the build CI runs; `build-images.sh stage` stages only):
#   dist/images/sandbox/app/dist/item-runner/<hash>/   the bundle, its loader and code cache (`current` links to it)
#   dist/images/sandbox/app/node_modules/              the runner's native packages
# Build both images with:  bash tools/docker/build-images.sh
# or, once staged:  docker build -f deployments/docker/sandbox.Dockerfile \
#                     --build-arg BASE_IMAGE=<userland> --build-arg VERSION=<version> -t mango-sandbox:<version> .
# BASE_IMAGE: the sandbox userland, made from Debian's packages by tools/docker/sandbox-image.sh (no
# registry); an image of your own needs Node >= 20.19, bash, a uid-1000 user and a /workspace it owns.
ARG BASE_IMAGE=mango-sandbox:v3
FROM ${BASE_IMAGE}
ARG VERSION=0.0.0-dev
ARG REVISION=unknown
ARG SOURCE=unknown
COPY dist/images/sandbox/app/ /opt/mango/
ENV MANGO_ITEM_ENTRY=/opt/mango/dist/item-runner/current/item-runner.js \
    HOME=/tmp
WORKDIR /workspace
USER 1000:1000
CMD ["/bin/bash"]
# The labels last: a new revision re-labels the image without copying its layers again.
LABEL org.opencontainers.image.title="mango-sandbox" \
      org.opencontainers.image.description="Mango sandbox: the userland and item runner of every Work container" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0"
