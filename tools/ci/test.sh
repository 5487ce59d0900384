#!/usr/bin/env bash
# npm test: install what is missing, start the real services (PostgreSQL, Temporal, S3, Docker), run every
# lint and test target (unit, integration, e2e) with Nx, stop the services, print one summary line.
set -euo pipefail
cd "$(dirname "$0")/../.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false
# Lint and typecheck results are cached by their inputs (nx.json) outside the checkout, so a fresh clone on a
# warm machine reuses them for unchanged projects; test targets are never cached (they always run).
export NX_CACHE_DIRECTORY=${NX_CACHE_DIRECTORY:-${MANGO_SERVICES_CACHE:-${HOME:-/root}/.cache/mango-services}/nx-cache}

t0=$(date +%s)
elapsed() { echo "$(( $(date +%s) - t0 )) s"; }
bash tools/ci/ensure-node-deps.sh
# A fresh run directory per test run (short path: it holds unix sockets); builds stay cached.
export MANGO_SERVICES_RUN=${MANGO_SERVICES_RUN:-/tmp/mango-test-$$}

# One workflow bundle for every suite that starts an orchestrator, in every project (MANGO_TEST_WORKFLOW_BUNDLE:
# startApp in @mango/testing passes it on as MANGO_WORKFLOW_BUNDLE; the orchestrator and supervisor suites'
# global set-up then skips its own): webpack once, beside the services' start, instead of once per suite's
# set-up and once per orchestrator started by the console, cli, sdk, testing and worker-runtime suites
# (about 10 s of CPU each on the loaded 2-core machine). The path that bundles at start is still tested
# (apps/orchestrator/test/workflow-bundle.int-spec.ts, the journey's first npm run up).
bundle_dir=$(mktemp -d /tmp/mango-workflows-XXXXXX)
export MANGO_TEST_WORKFLOW_BUNDLE=$bundle_dir/workflow-bundle.js
node -r ./tools/runtime/register.js -e 'require("./apps/orchestrator/src/workflow-bundle")
  .writeWorkflowBundle(process.argv[1]).catch((e) => { console.error(e); process.exit(1); })' \
  "$MANGO_TEST_WORKFLOW_BUNDLE" >"$bundle_dir/bundle.log" 2>&1 &
bundling=$!

started=0
cleanup() {
  if [ "$started" = 1 ] && [ -z "${MANGO_KEEP_SERVICES:-}" ]; then
    bash tools/ci/services.sh stop all || true
    case "$MANGO_SERVICES_RUN" in /tmp/mango-test-*) rm -rf "$MANGO_SERVICES_RUN" ;; esac
  fi
  rm -rf "$bundle_dir"
}
trap cleanup EXIT
# Marked before starting: a start that fails half way still stops what it started.
started=1
bash tools/ci/services.sh start all
eval "$(bash tools/ci/services.sh env)"
echo "[test] services up at $(elapsed)"
wait "$bundling" || { cat "$bundle_dir/bundle.log"; echo "[test] bundling the workflows failed" >&2; exit 1; }
echo "[test] workflows bundled at $(elapsed)"

rm -rf tmp/test-results && mkdir -p tmp/test-results
status=0
# Lint and typecheck run once over the whole repository (tools/checks: one TypeScript program instead of one
# per project, each of which re-checked every library it imports), then every project's tests.
# Four Nx tasks at a time: most suites wait on real clocks and processes (load stayed at 3-7 on 2 cores
# with two), so a third and a fourth overlap that waiting (with three, the lanes held ~4,700 s of suites:
# 1,630 s of wall). MANGO_TEST_PARALLEL overrides.
npx nx run-many -t lint-all typecheck-all test --parallel="${MANGO_TEST_PARALLEL:-4}" --outputStyle=stream "$@" || status=$?
echo "[test] Nx tasks done at $(elapsed)"
node tools/ci/summarize-tests.js tmp/test-results || status=$?
exit "$status"
