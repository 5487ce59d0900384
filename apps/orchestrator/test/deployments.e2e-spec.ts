import { randomBytes } from 'node:crypto';
import { HttpClient, ScriptedModelServer, WebhookReceiver } from '@mango/testing';
import { newId } from '@mango/platform-ids';
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { SessionStack, STACK_TIMEOUT_MS, startSessionStack } from './support';

/**
 * A Deployment on a one-minute cron over real processes and a real Temporal Schedule: time is short by
 * schedule (`* * * * *`), never by a mocked clock. Runs create Sessions through the orchestrator, and
 * signed deployment_run.* / session.* webhooks reach a standardwebhooks receiver.
 */
const SECRETS_KEY = randomBytes(32).toString('hex');
const JITTER_MS = 9_000; // 15% of a minute

type Run = {
  id: string;
  session_id: string | null;
  trigger_context: { type: string; scheduled_at?: string };
};

describe('scheduled Deployments (real API, orchestrator, Temporal Schedules, PostgreSQL)', () => {
  let stack: SessionStack;
  let model: ScriptedModelServer;
  let receiver: WebhookReceiver;
  let ws: HttpClient;
  const taskQueue = `deployments-${Date.now()}`;
  let temporal: Connection | undefined;

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    stack = await startSessionStack('deployments-cron', {
      taskQueue,
      apiEnv: {
        MANGO_TEMPORAL_ADDRESS: process.env.MANGO_TEMPORAL_ADDRESS!,
        MANGO_TASK_QUEUE: taskQueue,
        MANGO_WEBHOOK_SECRETS_KEY: SECRETS_KEY,
        MANGO_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
      },
      orchestratorEnv: {
        MANGO_WEBHOOK_SECRETS_KEY: SECRETS_KEY,
        MANGO_WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
        // One-second reconcile passes (orphans are removed once older than 10 s).
        MANGO_DEPLOYMENT_RECONCILE_SECONDS: '1',
      },
    });
    ({ model, ws } = stack);
    for (let i = 0; i < 20; i++) model.script({ content: [{ type: 'text', text: 'Report written.' }] });
  }, STACK_TIMEOUT_MS);

  afterAll(async () => {
    await temporal?.close();
    await stack?.close();
    await receiver?.close();
  });

  const runs = async (id: string, trigger?: string): Promise<Run[]> =>
    (await ws.get(`/v1/deployment_runs?deployment_id=${id}${trigger ? `&trigger_type=${trigger}` : ''}`)).body
      .data;

  async function waitForRuns(id: string, n: number, timeoutMs: number): Promise<Run[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = await runs(id, 'schedule');
      if (got.length >= n) return got;
      if (Date.now() > deadline)
        throw new Error(`deployment ${id}: ${got.length} scheduled runs, wanted ${n}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  /** Sleeps until `extraMs` after the next minute boundary. */
  const pastNextMinute = (extraMs: number) =>
    new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + extraMs));

  it('runs on a one-minute cron; pause stops it, a manual run works while paused, unpause resumes without backfill', async () => {
    const created = await ws.post('/v1/webhooks', {
      url: `${receiver.url}/deployments`,
      event_types: [
        'deployment_run.started',
        'deployment_run.succeeded',
        'session.created',
        'deployment.paused',
      ],
    });
    receiver.trust(created.body.secret);
    const agentId = (await ws.post('/v1/agents', { name: 'reporter', model: 'claude-sonnet-4-6' })).body.id;
    const envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
    const d = (
      await ws.post('/v1/deployments', {
        name: 'every minute',
        agent: agentId,
        environment_id: envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Report.' }] }],
        schedule: { type: 'cron', expression: '* * * * *', timezone: 'UTC' },
      })
    ).body;
    const upcoming = d.schedule.upcoming_runs_at.map((t: string) => Date.parse(t));
    expect(upcoming).toHaveLength(5);
    for (let i = 1; i < upcoming.length; i++)
      expect(upcoming[i] - upcoming[i - 1]).toBeLessThan(60_000 + JITTER_MS);

    // 1. The schedule fires: a run with a Session created by the orchestrator's activity.
    const [first] = await waitForRuns(d.id, 1, 60_000 + JITTER_MS + 15_000);
    expect(first!.trigger_context.type).toBe('schedule');
    const nominal = Date.parse(first!.trigger_context.scheduled_at!);
    expect(nominal % 60_000).toBeLessThanOrEqual(JITTER_MS);
    const session = (await ws.get(`/v1/sessions/${first!.session_id}`)).body;
    expect(session.deployment_id).toBe(d.id);
    const afterFirst = (await ws.get(`/v1/deployments/${d.id}`)).body;
    expect(Date.parse(afterFirst.schedule.last_run_at)).toBe(nominal);
    // The run's webhooks arrive signed (verified by the receiver with standardwebhooks).
    const hooks = await receiver.waitFor('/deployments', (g) =>
      ['deployment_run.started', 'deployment_run.succeeded', 'session.created'].every((t) =>
        g.some((x) => x.event?.data.type === t),
      ),
    );
    expect(hooks.every((h) => h.verifiedWith.length === 1)).toBe(true);
    const succeeded = hooks.find((h) => h.event!.data.type === 'deployment_run.succeeded')!;
    expect(succeeded.event!.data).toEqual({
      type: 'deployment_run.succeeded',
      id: first!.id,
      workspace_id: 'wrkspc_default',
      deployment_id: d.id,
    });

    // 2. Paused: the Temporal Schedule is paused, nothing fires past the next minute; a manual run still works.
    const paused = (await ws.post(`/v1/deployments/${d.id}/pause`)).body;
    expect(paused.schedule.upcoming_runs_at).toEqual([]);
    const scheduledBefore = (await runs(d.id, 'schedule')).length;
    const manual = await ws.post(`/v1/deployments/${d.id}/run`);
    expect(manual.status).toBe(201);
    expect(manual.body).toMatchObject({ trigger_context: { type: 'manual' }, error: null });
    expect((await ws.get(`/v1/sessions/${manual.body.session_id}`)).body.deployment_id).toBe(d.id);
    await pastNextMinute(JITTER_MS + 3_000);
    expect(await runs(d.id, 'schedule')).toHaveLength(scheduledBefore);

    // 3. Unpaused: the missed minute is not backfilled; the next one runs.
    const unpausedAt = Date.now();
    await ws.post(`/v1/deployments/${d.id}/unpause`);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await runs(d.id, 'schedule')).toHaveLength(scheduledBefore);
    const resumed = await waitForRuns(d.id, scheduledBefore + 1, 60_000 + JITTER_MS + 15_000);
    expect(resumed).toHaveLength(scheduledBefore + 1);
    expect(Date.parse(resumed[0]!.trigger_context.scheduled_at!)).toBeGreaterThan(unpausedAt - 1_000);
    await ws.post(`/v1/deployments/${d.id}/archive`);
  }, 300_000);

  describe("Temporal Schedules follow PostgreSQL (the orchestrator's reconcile pass)", () => {
    let client: Client;
    beforeAll(async () => {
      temporal = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
      client = new Client({ connection: temporal });
    });

    const state = async (deploymentId: string): Promise<'missing' | 'paused' | 'active'> => {
      try {
        const d = await client.schedule.getHandle(`deployment:${deploymentId}`).describe();
        return d.state.paused ? 'paused' : 'active';
      } catch (e) {
        if (e instanceof ScheduleNotFoundError) return 'missing';
        throw e;
      }
    };
    async function eventually(deploymentId: string, want: string, timeoutMs = 20_000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      let got = await state(deploymentId);
      while (got !== want) {
        if (Date.now() > deadline) throw new Error(`schedule of ${deploymentId} is ${got}, wanted ${want}`);
        await new Promise((r) => setTimeout(r, 250));
        got = await state(deploymentId);
      }
      return got;
    }
    const hourly = (agent: string, environment_id: string) => ({
      name: 'hourly',
      agent,
      environment_id,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Report.' }] }],
      schedule: { type: 'cron', expression: '0 * * * *', timezone: 'UTC' },
    });

    it('an automatic pause written only to PostgreSQL (the Agent archived) pauses the Schedule', async () => {
      const agent = (await ws.post('/v1/agents', { name: 'doomed', model: 'claude-sonnet-4-6' })).body.id;
      const env = (await ws.post('/v1/environments', { name: 'pool-a' })).body.id;
      const d = (await ws.post('/v1/deployments', hourly(agent, env))).body;
      expect(await state(d.id)).toBe('active');
      await ws.post(`/v1/agents/${agent}/archive`);
      expect((await ws.get(`/v1/deployments/${d.id}`)).body.status).toBe('paused');
      await eventually(d.id, 'paused');
      await ws.post(`/v1/deployments/${d.id}/archive`);
      await eventually(d.id, 'missing');
    }, 60_000);

    it("a Schedule deleted behind Mango's back comes back with the Deployment's state", async () => {
      const agent = (await ws.post('/v1/agents', { name: 'steady', model: 'claude-sonnet-4-6' })).body.id;
      const env = (await ws.post('/v1/environments', { name: 'pool-b' })).body.id;
      const d = (await ws.post('/v1/deployments', hourly(agent, env))).body;
      await ws.post(`/v1/deployments/${d.id}/pause`);
      await client.schedule.getHandle(`deployment:${d.id}`).delete();
      expect(await eventually(d.id, 'paused')).toBe('paused');
      await ws.post(`/v1/deployments/${d.id}/archive`);
    }, 60_000);

    it("an orphan Schedule of this installation is removed after the grace period; another installation's is left alone", async () => {
      const schedule = (id: string, owner: string) =>
        client.schedule.create({
          scheduleId: `deployment:${id}`,
          spec: { cronExpressions: ['0 0 1 1 *'] },
          action: {
            type: 'startWorkflow',
            workflowType: 'deploymentRunWorkflow',
            args: [{ deploymentId: id }],
            taskQueue: owner,
          },
          memo: { mango_task_queue: owner },
        });
      const orphan = newId('deployment');
      const foreign = newId('deployment');
      await schedule(orphan, taskQueue);
      await schedule(foreign, `${taskQueue}-elsewhere`);
      const created = Date.now();
      await eventually(orphan, 'missing', 40_000);
      expect(Date.now() - created).toBeGreaterThanOrEqual(9_000); // not before the 10 s grace
      expect(await state(foreign)).toBe('active');
      await client.schedule.getHandle(`deployment:${foreign}`).delete();
    }, 60_000);
  });
});
