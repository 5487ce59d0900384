#!/usr/bin/env bash
# tools/release/release.sh [version] [--out DIR] [--only PARTS] — `npm run release`: every artifact of one
# version, made locally (nothing is published from here; docs/versioning.md says how a release goes out).
#   version      defaults to the root package.json's; another value is refused (set it first:
#                node tools/release/version.js set X.Y.Z, commit, then release)
#   --out DIR    defaults to dist/release/<version>/ (emptied first)
#   --only PARTS comma-separated subset of: images,chart,sdks (default: all three)
# Writes into DIR:
#   images/      tools/release/images.sh <version> DIR/images  (docker save archives; skipped with a notice
#                while that script does not exist)
#   chart/       tools/release/chart.sh <version> DIR/chart    (helm package; same rule)
#   npm/ python/ go/   tools/release/sdks.sh DIR               (npm tarball, sdist + wheel, Go module zip)
#   RELEASE-NOTES.md   this version's CHANGELOG.md entry (the release is refused without one)
#   SHA256SUMS         sha256sum of every file (`sha256sum -c SHA256SUMS` in DIR verifies them)
#   LISTING            every file with its size in bytes, then the total
# Refuses when a package's version disagrees with the root package.json (tools/release/version.js check).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
log() { printf '[release] %s\n' "$*" >&2; }

want="" out="" only="images,chart,sdks"
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --only) only=${2:?--only needs parts}; shift 2 ;;
    --only=*) only=${1#--only=}; shift ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) log "unknown option $1"; exit 2 ;;
    *) [ -z "$want" ] || { log "one version only"; exit 2; }; want=$1; shift ;;
  esac
done
for part in ${only//,/ }; do
  case "$part" in images | chart | sdks) ;; *) log "unknown part '$part' (images, chart, sdks)"; exit 2 ;; esac
done
has() { case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

version=$(node tools/release/version.js check) || { log "package versions disagree (above)"; exit 1; }
if [ -n "$want" ] && [ "$want" != "$version" ]; then
  log "asked for $want but this tree is $version (root package.json). Set it first:"
  log "  node tools/release/version.js set $want && git commit -am 'Release $want'"
  exit 1
fi
# This version's CHANGELOG entry: from its heading to the next version heading.
notes=$(awk -v v="$version" '
  /^## \[/ { if (on) exit; if (index($0, "## [" v "]") == 1) on = 1 }
  on { print }' CHANGELOG.md)
[ -n "$notes" ] || { log "CHANGELOG.md has no entry '## [$version]'; write it first"; exit 1; }
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  log "warning: the working tree has uncommitted changes; a release is made from a clean checkout of its tag"
fi

out=${out:-dist/release/$version}
rm -rf "$out" && mkdir -p "$out"
out=$(cd "$out" && pwd)
log "Mango $version into $out ($only)"

for part in images chart; do
  has "$part" || continue
  script=tools/release/$part.sh
  if [ -f "$script" ]; then
    log "$part: $script $version $out/$part"
    bash "$script" "$version" "$out/$part"
  else
    log "$part: $script is missing; no $part in this release"
  fi
done
if has sdks; then
  log "sdks: tools/release/sdks.sh $out"
  bash tools/release/sdks.sh "$out" >/dev/null
fi
printf '%s\n' "$notes" >"$out/RELEASE-NOTES.md"

commit=$(git rev-parse --short HEAD 2>/dev/null || echo 'no commit')
files=$(mktemp)
trap 'rm -f "$files"' EXIT
(
  cd "$out"
  find . -type f ! -name SHA256SUMS ! -name LISTING | sed 's|^\./||' | LC_ALL=C sort >"$files"
  xargs -d '\n' sha256sum <"$files" >SHA256SUMS
  total=0
  {
    printf 'Mango %s (%s)\n\n' "$version" "$commit"
    while IFS= read -r f; do
      size=$(stat -c %s "$f")
      total=$((total + size))
      printf '%12d  %s\n' "$size" "$f"
    done <"$files"
    printf '%12d  total (%d files)\n' "$total" "$(wc -l <"$files")"
  } >LISTING
)
cat "$out/LISTING"
