import { Client, Connection } from '@temporalio/client';
import { AppProcess, createTestDatabase, startOrchestrator, TestDatabase } from '@mango/testing';
import type { probeWorkflow } from '@mango/workflows';

/** The real orchestrator process, the real Temporal dev server and a real PostgreSQL database. */
describe('apps/orchestrator runs workflows on the real Temporal server', () => {
  let db: TestDatabase;
  let app: AppProcess;
  const taskQueue = `mango-test-${Date.now()}`;

  beforeAll(async () => {
    db = await createTestDatabase('orch');
    app = await startOrchestrator(db.url, { taskQueue });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await db.drop();
  });

  it('executes a workflow whose activity reads PostgreSQL', async () => {
    const connection = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
    try {
      const client = new Client({ connection, namespace: 'default' });
      const result = await client.workflow.execute<typeof probeWorkflow>('probeWorkflow', {
        taskQueue,
        workflowId: `probe-${Date.now()}`,
        args: ['mango'],
        workflowExecutionTimeout: '60 seconds',
      });
      expect(result.greeting).toBe('hello mango');
      expect(Math.abs(Date.parse(result.database_time) - Date.now())).toBeLessThan(60_000);
    } finally {
      await connection.close();
    }
  });

  it('shuts the worker down and exits 0 on SIGTERM', async () => {
    expect(await app.stop('SIGTERM')).toBe(0);
    expect(app.logs()).not.toMatch(/"level":"(error|fatal)"/);
  });
});
