#!/usr/bin/env bash
# tools/release/chart.sh <version> <outdir>: the Helm chart (deployments/helm/mango) packaged for one release,
#   <outdir>/mango-<version>.tgz   (`helm package`, chart version and appVersion = <version>, so its default
#                                   image tags are mango-control-plane:<version> and mango-sandbox:<version>)
# and prints `<file> <bytes> bytes`. helm is the one tools/ci/services.sh builds (deploytools).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: $0 <version> <outdir>" >&2; exit 2; }
VERSION=$1 OUT=$2
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
eval "$(bash "$ROOT/tools/ci/services.sh" env)"
[ -x "$MANGO_HELM_BIN" ] || bash "$ROOT/tools/ci/services.sh" install deploytools >&2
"$MANGO_HELM_BIN" package "$ROOT/deployments/helm/mango" --version "$VERSION" --app-version "$VERSION" -d "$OUT" >/dev/null
file=$OUT/mango-$VERSION.tgz
[ -s "$file" ] || { echo "chart.sh: helm package wrote no $file" >&2; exit 1; }
printf '%s %s bytes\n' "$(basename "$file")" "$(stat -c %s "$file")"
