import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  ApiUnderTest,
  AppProcess,
  httpClient,
  HttpClient,
  startApi,
  startScriptedModel,
  ScriptedModelServer,
  WebhookReceiver,
} from '@mango/testing';
import { startOrchestrator } from './support';

/**
 * Webhook delivery over real processes: apps/api records the webhook event and its deliveries in the
 * transaction of the change (outbox); apps/orchestrator relays them to Temporal, where a delivery workflow
 * makes up to 3 signed attempts to a Standard Webhooks receiver in this process, which verifies every
 * request with the `standardwebhooks` library.
 */
const SECRETS_KEY = randomBytes(32).toString('hex');
// The API may register any loopback receiver; the orchestrator reaches only 127.0.0.1 (so 127.0.0.2 shows
// a delivery-time refusal without sending traffic anywhere but loopback).
const API_ALLOW = '127.0.0.0/8';
const ORCH_ALLOW = '127.0.0.1/32';
const RETRY_BASE_MS = 1000;

describe('webhook delivery (real API, orchestrator, Temporal, PostgreSQL; standardwebhooks receiver)', () => {
  let api: ApiUnderTest;
  let orchestrator: AppProcess;
  let model: ScriptedModelServer;
  let receiver: WebhookReceiver;
  let ws: HttpClient;
  let agentId: string;
  let envId: string;
  const taskQueue = `webhooks-${Date.now()}`;
  const orchestratorEnv = {
    MANGO_WEBHOOK_SECRETS_KEY: SECRETS_KEY,
    MANGO_WEBHOOK_ALLOWED_CIDRS: ORCH_ALLOW,
    MANGO_WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS),
    MANGO_WEBHOOK_TIMEOUT_MS: '3000',
  };
  const startOrch = () =>
    startOrchestrator(api.db.url, { taskQueue, modelUrl: model.url, env: orchestratorEnv });

  beforeAll(async () => {
    api = await startApi('webhooks-delivery', {
      MANGO_WEBHOOK_SECRETS_KEY: SECRETS_KEY,
      MANGO_WEBHOOK_ALLOWED_CIDRS: API_ALLOW,
    });
    model = await startScriptedModel();
    receiver = await new WebhookReceiver().start();
    orchestrator = await startOrch();
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    agentId = (await ws.post('/v1/agents', { name: 'chat', model: 'claude-sonnet-4-6' })).body.id;
    envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
  }, 120_000);

  afterAll(async () => {
    await orchestrator?.stop();
    await receiver?.close();
    await model?.close();
    await api?.close();
  });

  // Each test's endpoints are deleted after it, so later tests' events do not reach them.
  const registered: string[] = [];
  afterEach(async () => {
    for (const id of registered.splice(0)) await ws.delete(`/v1/webhooks/${id}`).catch(() => undefined);
  });

  async function register(path: string, eventTypes: string[]) {
    const res = await ws.post('/v1/webhooks', { url: `${receiver.url}${path}`, event_types: eventTypes });
    expect(res.status).toBe(201);
    receiver.trust(res.body.secret);
    registered.push(res.body.id);
    return res.body as { id: string; secret: string };
  }

  const newSession = async (initial = true) =>
    (
      await ws.post('/v1/sessions', {
        agent: agentId,
        environment_id: envId,
        ...(initial
          ? { initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Hi' }] }] }
          : {}),
      })
    ).body as { id: string };

  it("a Session's lifecycle produces exactly the subscribed, verified thin events", async () => {
    await register('/lifecycle', [
      'session.created',
      'session.status_run_started',
      'session.status_idled',
      'session.archived',
      'session.deleted',
    ]);
    model.script({
      content: [{ type: 'text', text: 'Hello.' }],
      usage: { input_tokens: 3, output_tokens: 2 },
    });
    const s = await newSession();
    await receiver.waitFor('/lifecycle', (got) =>
      got.some((g) => g.event?.data.type === 'session.status_idled'),
    );
    await ws.post(`/v1/sessions/${s.id}/archive`);
    await ws.delete(`/v1/sessions/${s.id}`);
    const got = await receiver.waitFor('/lifecycle', (g) => g.length >= 5);
    // Every delivery verified with the endpoint's secret, and is exactly the §3.12 envelope.
    for (const g of got) {
      expect(g.verifiedWith).toHaveLength(1);
      expect(g.headers['webhook-id']).toBe(g.event!.id);
      expect(Object.keys(g.event!).sort()).toEqual(['created_at', 'data', 'id', 'type']);
      expect(g.event).toMatchObject({ type: 'event', id: expect.stringMatching(/^whe_/) });
      expect(g.event!.data).toEqual({ type: expect.any(String), id: s.id, workspace_id: 'wrkspc_default' });
      expect(g.headers['content-type']).toBe('application/json');
    }
    expect(got.map((g) => g.event!.data.type).sort()).toEqual(
      [
        'session.archived',
        'session.created',
        'session.deleted',
        'session.status_idled',
        'session.status_run_started',
      ].sort(),
    );
    // session.created precedes the turn's events (one transaction, in order); nothing else was sent.
    expect(new Set(got.map((g) => g.event!.id)).size).toBe(5);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.at('/lifecycle')).toHaveLength(5);
  });

  it('an endpoint failing twice (a redirect, then a 503) gets 3 attempts with one webhook-id and fresh timestamps', async () => {
    const hook = await register('/flaky', ['session.created']);
    receiver.answer('/flaky', 302, 503);
    const s = await newSession(false);
    const got = await receiver.waitFor('/flaky', (g) => g.length >= 3);
    expect(got.map((g) => g.answered)).toEqual([302, 503, 200]);
    expect(new Set(got.map((g) => g.headers['webhook-id'])).size).toBe(1);
    expect(got.every((g) => g.verifiedWith.length === 1 && g.event!.data.id === s.id)).toBe(true);
    const stamps = got.map((g) => Number(g.headers['webhook-timestamp']));
    expect(stamps[1]!).toBeGreaterThan(stamps[0]!);
    expect(stamps[2]!).toBeGreaterThan(stamps[1]!);
    // Jittered backoff: ≥ base after the first failure, ≥ 6×base after the second.
    expect(got[1]!.receivedAt - got[0]!.receivedAt).toBeGreaterThanOrEqual(RETRY_BASE_MS - 50);
    expect(got[2]!.receivedAt - got[1]!.receivedAt).toBeGreaterThanOrEqual(6 * RETRY_BASE_MS - 50);
    // The redirect was refused, never followed.
    expect(receiver.at('/redirected')).toEqual([]);
    // Identical bodies on every attempt.
    expect(new Set(got.map((g) => g.body)).size).toBe(1);

    const log = await waitForLog(hook.id, (d) => d[0]?.state === 'succeeded');
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      trigger: 'event',
      state: 'succeeded',
      event: { id: got[0]!.headers['webhook-id'], type: 'session.created' },
    });
    expect(
      log[0].attempts.map((a: { attempt: number; status_code: number }) => [a.attempt, a.status_code]),
    ).toEqual([
      [1, 302],
      [2, 503],
      [3, 200],
    ]);
    expect(log[0].attempts[0].error).toMatch(/redirect/);
    expect(log[0].attempts[1].error).toMatch(/503/);
    expect(log[0].attempts[2].error).toBeNull();
    for (const a of log[0].attempts) expect(a.latency_ms).toBeGreaterThanOrEqual(0);

    // Manual redelivery: a new delivery of the same event (same webhook-id), verified again.
    const again = await ws.post(`/v1/webhooks/${hook.id}/deliveries/${log[0].id}/redeliver`);
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ trigger: 'redeliver', state: 'pending', attempts: [] });
    const after = await receiver.waitFor('/flaky', (g) => g.length >= 4);
    expect(after[3]!.headers['webhook-id']).toBe(got[0]!.headers['webhook-id']);
    expect(after[3]!.verifiedWith).toHaveLength(1);
    const log2 = await waitForLog(hook.id, (d) => d.length === 2 && d[0].state === 'succeeded');
    expect(log2[0]).toMatchObject({ id: again.body.id, trigger: 'redeliver' });
  }, 60_000);

  it('three failures give up: the delivery is failed with three attempts', async () => {
    const hook = await register('/down', ['session.created']);
    receiver.answer('/down', 500, 500, 500, 500);
    await newSession(false);
    const log = await waitForLog(hook.id, (d) => d[0]?.state === 'failed', 60_000);
    expect(log[0].attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 500]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.at('/down')).toHaveLength(3);
  }, 70_000);

  it('refuses at delivery time an address the orchestrator does not allow (no request is made)', async () => {
    const port = new URL(receiver.url).port;
    const res = await ws.post('/v1/webhooks', {
      url: `http://127.0.0.2:${port}/elsewhere`,
      event_types: ['session.created'],
    });
    expect(res.status).toBe(201);
    registered.push(res.body.id);
    await newSession(false);
    const log = await waitForLog(res.body.id, (d) => d[0]?.state === 'failed');
    expect(log[0].attempts).toHaveLength(1);
    expect(log[0].attempts[0]).toMatchObject({ status_code: null, error: expect.stringMatching(/loopback/) });
    expect(receiver.at('/elsewhere')).toEqual([]);
  });

  it('secret rotation: both secrets sign during the overlap; after it only the new one', async () => {
    const hook = await register('/rotate', ['session.created']);
    const rotated = (
      await ws.post(`/v1/webhooks/${hook.id}/rotate_secret`, { expire_previous_in_seconds: 3600 })
    ).body;
    receiver.trust(rotated.secret);
    await newSession(false);
    const [overlap] = await receiver.waitFor('/rotate', (g) => g.length >= 1);
    expect(String(overlap!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(overlap!.verifiedWith.sort()).toEqual([hook.secret, rotated.secret].sort());
    // A receiver that only knows the old secret still verifies during the overlap.
    const headers = {
      'webhook-id': String(overlap!.headers['webhook-id']),
      'webhook-timestamp': String(overlap!.headers['webhook-timestamp']),
      'webhook-signature': String(overlap!.headers['webhook-signature']),
    };
    expect(() => new Webhook(hook.secret).verify(overlap!.body, headers)).not.toThrow();

    const hard = (await ws.post(`/v1/webhooks/${hook.id}/rotate_secret`, { expire_previous_in_seconds: 0 }))
      .body;
    receiver.trust(hard.secret);
    await newSession(false);
    const got = await receiver.waitFor('/rotate', (g) => g.length >= 2);
    expect(String(got[1]!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(got[1]!.verifiedWith).toEqual([hard.secret]);
    const h2 = {
      'webhook-id': String(got[1]!.headers['webhook-id']),
      'webhook-timestamp': String(got[1]!.headers['webhook-timestamp']),
      'webhook-signature': String(got[1]!.headers['webhook-signature']),
    };
    expect(() => new Webhook(rotated.secret).verify(got[1]!.body, h2)).toThrow();
    expect(() => new Webhook(hook.secret).verify(got[1]!.body, h2)).toThrow();
  });

  it('disabled and deleted endpoints receive nothing', async () => {
    const off = await register('/off', ['session.created']);
    await ws.post(`/v1/webhooks/${off.id}`, { disabled: true });
    const gone = await register('/gone', ['session.created']);
    await ws.delete(`/v1/webhooks/${gone.id}`);
    const on = await register('/on', ['session.created']);
    await newSession(false);
    await receiver.waitFor('/on', (g) => g.length >= 1);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.at('/off')).toEqual([]);
    expect(receiver.at('/gone')).toEqual([]);
    expect((await ws.get(`/v1/webhooks/${off.id}/deliveries`)).body.data).toEqual([]);
    void on;
  });

  // Before the only test that does not use the model: its routed replies answer however many requests
  // the Threads make.
  it('delegate and Advisor Threads announce themselves with data.session_thread_id', async () => {
    await register('/threads', [
      'session.thread_created',
      'session.thread_idled',
      'session.thread_terminated',
    ]);
    const helper = (
      await ws.post('/v1/agents', { name: 'helper', model: 'claude-sonnet-4-6', system: 'You help.' })
    ).body.id;
    const boss = (
      await ws.post('/v1/agents', {
        name: 'boss',
        model: 'claude-sonnet-4-6',
        system: 'You coordinate.',
        multiagent: {
          type: 'coordinator',
          agents: [helper, { type: 'advisor', model: 'claude-sonnet-4-6' }],
        },
      })
    ).body.id;
    const text = (t: string) => ({ content: [{ type: 'text', text: t }] });
    const route = (body: any) => {
      const system = String(body.system ?? '');
      if (system.startsWith('You help.')) return text('Helped.');
      if (system.startsWith('You are an advisor')) return text('Advice.');
      const last = body.messages.at(-1);
      if (Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result'))
        return text('Sent.');
      if (JSON.stringify(body.messages).includes('message from=')) return text('Done.');
      return {
        content: [
          { type: 'tool_use', id: 'toolu_a', name: 'consult_advisor', input: { question: 'Ok?' } },
          {
            type: 'tool_use',
            id: 'toolu_h',
            name: 'send_to_agent',
            input: { agent: 'helper', message: 'Help.' },
          },
        ],
        stop_reason: 'tool_use',
      };
    };
    model.script(...Array.from({ length: 20 }, () => route));
    const s = (
      await ws.post('/v1/sessions', {
        agent: boss,
        environment_id: envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Go.' }] }],
      })
    ).body as { id: string };
    const got = await receiver.waitFor('/threads', (g) => g.length >= 5);
    const threads = (await ws.get(`/v1/sessions/${s.id}/threads`)).body.data as Array<{
      id: string;
      agent: any;
    }>;
    const advisor = threads.find((t) => t.agent?.type === 'advisor')!.id;
    const delegate = threads.find((t) => t.agent?.name === 'helper')!.id;
    for (const g of got) expect(g.verifiedWith).toHaveLength(1);
    const seen = got.map((g) => [g.event!.data.type, g.event!.data.session_thread_id]);
    expect(seen.sort()).toEqual(
      [
        ['session.thread_created', advisor],
        ['session.thread_created', delegate],
        ['session.thread_idled', advisor],
        ['session.thread_idled', delegate],
        ['session.thread_terminated', advisor],
      ].sort(),
    );
    for (const g of got) expect(g.event!.data).toMatchObject({ id: s.id, workspace_id: 'wrkspc_default' });
  });

  it('kill -9 of the orchestrator and then of the API between the change and the delivery still delivers', async () => {
    await register('/durable', ['session.created']);
    expect(await orchestrator.stop('SIGKILL')).toBeNull();
    const s = await newSession(false);
    // The change and its delivery row committed together; nothing was sent yet.
    const pending = await api.sql<{ n: string }>(
      `SELECT count(*) AS n FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE w.url LIKE '%/durable' AND d.dispatched_at IS NULL`,
    );
    expect(pending[0]!.n).toBe('1');
    expect(await api.app.stop('SIGKILL')).toBeNull();
    expect(receiver.at('/durable')).toEqual([]);
    orchestrator = await startOrch();
    const [got] = await receiver.waitFor('/durable', (g) => g.length >= 1);
    expect(got!.event!.data).toMatchObject({ type: 'session.created', id: s.id });
    expect(got!.verifiedWith).toHaveLength(1);
  }, 120_000);

  async function waitForLog(
    webhookId: string,
    ok: (d: any[]) => boolean,
    timeoutMs = 30_000,
  ): Promise<any[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const data = (await ws.get(`/v1/webhooks/${webhookId}/deliveries`)).body.data as any[];
      if (ok(data)) return data;
      if (Date.now() > deadline) throw new Error(`delivery log of ${webhookId}: ${JSON.stringify(data)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
});
