import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { probeWorkflow } from '@mango/workflows';
import { testWorkflowBundle } from './test-workflow-bundle';

/**
 * The workflow bundle (as the orchestrator runs it, bundled once: testWorkflowBundle) runs on the real
 * Temporal server and replays its own history deterministically.
 */
describe('probe workflow (real Temporal server)', () => {
  it('runs, and its recorded history replays without non-determinism', async () => {
    const address = process.env.MANGO_TEMPORAL_ADDRESS!;
    const taskQueue = `probe-int-${Date.now()}`;
    const workflowBundle = await testWorkflowBundle();
    const nativeConnection = await NativeConnection.connect({ address });
    const worker = await Worker.create({
      connection: nativeConnection,
      taskQueue,
      workflowBundle,
      activities: { databaseTime: async () => '2026-01-01T00:00:00.000Z' },
    });
    const connection = await Connection.connect({ address });
    try {
      const client = new Client({ connection });
      const handle = await worker.runUntil(
        client.workflow
          .start<typeof probeWorkflow>('probeWorkflow', {
            taskQueue,
            workflowId: `probe-int-${Date.now()}`,
            args: ['replay'],
          })
          .then(async (h) => {
            await h.result();
            return h;
          }),
      );
      expect(await handle.result()).toEqual({
        greeting: 'hello replay',
        database_time: '2026-01-01T00:00:00.000Z',
      });
      const history = await handle.fetchHistory();
      await Worker.runReplayHistory({ workflowBundle }, history);
    } finally {
      await connection.close();
      await nativeConnection.close();
    }
  });
});
