import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker, type WorkflowBundleOption } from '@temporalio/worker';
import { temporalWorkflowSinks } from '@mango/platform-tracing';
import { testWorkflowBundle } from './test-workflow-bundle';

/**
 * Replays recorded Session workflow histories (apps/orchestrator/test/histories, recorded with
 * RECORD_HISTORIES=<dir> from the e2e tests) against the current workflow code: a change that would break
 * Sessions already in flight fails here with a non-determinism error.
 * Every history replays against one bundle of that code, as the orchestrator runs it (testWorkflowBundle),
 * not a webpack bundle of the same sources per history (about 10 s each on the 2-core CI machine).
 */
describe('Session workflow replay over recorded histories', () => {
  const dir = join(__dirname, 'histories');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  let workflowBundle: WorkflowBundleOption;

  beforeAll(async () => {
    workflowBundle = await testWorkflowBundle();
  }, 120_000);

  it('has recorded histories to replay', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files)(
    '%s replays deterministically',
    async (file) => {
      const history = temporal.api.history.v1.History.fromObject(
        JSON.parse(readFileSync(join(dir, file), 'utf8')),
      );
      expect(history.events?.length).toBeGreaterThan(10);
      await Worker.runReplayHistory({ workflowBundle, sinks: temporalWorkflowSinks() }, history, file);
    },
    60_000,
  );
});
