import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeWorkflowBundle } from '../src/workflow-bundle';

/**
 * Once per Jest run: bundles the workflows (webpack, ~15 s on a loaded 2-core machine) so that every
 * orchestrator the suites start loads that bundle (MANGO_WORKFLOW_BUNDLE, see startApp in @mango/testing) instead of
 * bundling the same sources again. The bundle comes from this checkout's sources, built now. Also the
 * globalSetup of apps/supervisor's suites.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.MANGO_TEST_WORKFLOW_BUNDLE) return;
  const dir = mkdtempSync(join(tmpdir(), 'mango-workflows-'));
  const path = join(dir, 'workflow-bundle.js');
  await writeWorkflowBundle(path);
  process.env.MANGO_TEST_WORKFLOW_BUNDLE = path;
  process.env.MANGO_TEST_WORKFLOW_BUNDLE_DIR = dir;
}
