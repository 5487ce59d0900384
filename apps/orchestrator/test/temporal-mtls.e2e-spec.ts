import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import {
  HttpClient,
  MtlsProxy,
  ScriptedModelServer,
  startOrchestrator,
  TestCa,
  testCertificates,
  TestCertificates,
} from '@mango/testing';
import { SessionStack, STACK_TIMEOUT_MS, startSessionStack, waitForIdles } from './support';

/**
 * Mango against a Temporal that requires a client certificate (docs/operator-guide.md "Temporal
 * connection"): the dev server has no TLS options, so a TLS terminator that verifies client certificates
 * (Node's TLS stack, `requestCert` + `rejectUnauthorized`, ALPN h2: MtlsProxy) stands in front of it, with
 * a certificate chain the test makes with openssl. apps/api and the orchestrator know only the proxy's
 * address: every Temporal call of the turn (relay, worker, activities) and of the API's Schedules passes
 * through TLS with the client certificate. A process without it, or with another CA's, cannot start.
 */
describe('a Temporal that requires mTLS (real API, orchestrator, Temporal behind a TLS proxy)', () => {
  let certs: TestCertificates;
  let ca: TestCa;
  let proxy: MtlsProxy;
  let address: string;
  let stack: SessionStack;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  const taskQueue = `mtls-${Date.now()}`;

  const tlsEnv = (client: { certFile: string; keyFile: string } | null) => ({
    MANGO_TEMPORAL_ADDRESS: address,
    MANGO_TEMPORAL_TLS_CA_FILE: ca.certFile,
    // The proxy's certificate names localhost; the SDKs check it against this name.
    MANGO_TEMPORAL_TLS_SERVER_NAME: 'localhost',
    ...(client
      ? { MANGO_TEMPORAL_TLS_CERT_FILE: client.certFile, MANGO_TEMPORAL_TLS_KEY_FILE: client.keyFile }
      : {}),
  });

  const API_KEY = 'temporal-api-key-must-not-leak';
  let orchestratorCert: { certFile: string; keyFile: string; key: Buffer };

  beforeAll(async () => {
    certs = testCertificates();
    ca = certs.ca('mango-test-ca');
    orchestratorCert = ca.client('mango-orchestrator');
    proxy = new MtlsProxy({
      target: process.env.MANGO_TEMPORAL_ADDRESS!,
      ca: ca.cert,
      ...ca.server('temporal'),
    });
    address = await proxy.listen();
    stack = await startSessionStack('mtls', {
      taskQueue,
      apiEnv: { ...tlsEnv(ca.client('mango-api')), MANGO_TASK_QUEUE: taskQueue },
      // An API key too (the dev server ignores it): it must never reach a log line.
      orchestratorEnv: { ...tlsEnv(orchestratorCert), MANGO_TEMPORAL_API_KEY: API_KEY },
    });
    ({ model, ws } = stack);
  }, STACK_TIMEOUT_MS);

  afterAll(async () => {
    await stack?.close();
    await proxy?.close();
    certs?.remove();
  });

  it('a turn runs end to end with every Temporal connection through mTLS', async () => {
    model.script({ content: [{ type: 'text', text: 'Hello over mTLS.' }] });
    const agent = (await ws.post('/v1/agents', { name: 'mtls', model: 'claude-sonnet-4-6' })).body.id;
    const environment = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
    const session = (
      await ws.post('/v1/sessions', {
        agent,
        environment_id: environment,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Hi' }] }],
      })
    ).body;
    const events = await waitForIdles(ws, session.id, 1);
    expect(events.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    expect(events[5]!.stop_reason).toEqual({ type: 'end_turn' });
    // The worker, the relay and the other loops each opened their connections through the proxy.
    expect(proxy.accepted.filter((cn) => cn === 'mango-orchestrator').length).toBeGreaterThanOrEqual(2);
    expect(proxy.refused).toEqual([]);
    // Secrets never logged: neither the API key nor a line of the private key.
    const logs = stack.orchestrator.logs() + stack.api.app.logs();
    expect(logs).toContain('temporal worker running');
    expect(logs).not.toContain(API_KEY);
    expect(logs).not.toContain(orchestratorCert.key.toString().split('\n')[1]!);
  }, 120_000);

  it("apps/api's Deployment Schedules go through mTLS too", async () => {
    const agent = (await ws.post('/v1/agents', { name: 'hourly', model: 'claude-sonnet-4-6' })).body.id;
    const environment = (await ws.post('/v1/environments', { name: 'pool-d' })).body.id;
    const created = await ws.post('/v1/deployments', {
      name: 'hourly',
      agent,
      environment_id: environment,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'Report.' }] }],
      schedule: { type: 'cron', expression: '0 * * * *', timezone: 'UTC' },
    });
    expect(created.status).toBe(201);
    expect(proxy.accepted).toContain('mango-api');
    // Seen directly on the dev server (the test's own plaintext connection).
    const connection = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
    try {
      const schedule = await new Client({ connection }).schedule
        .getHandle(`deployment:${created.body.id}`)
        .describe();
      expect(schedule.action).toMatchObject({ taskQueue });
    } finally {
      await connection.close();
    }
  }, 60_000);

  it.each([
    ['without a client certificate', () => null, 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE'],
    [
      "with another CA's client certificate",
      () => certs.ca('other-ca').client('mango-orchestrator'),
      undefined,
    ],
  ])(
    'an orchestrator %s is refused by Temporal and does not start',
    async (_name, client, code) => {
      const refusedBefore = proxy.refused.length;
      const started = startOrchestrator(stack.api.db.url, {
        taskQueue: `${taskQueue}-refused`,
        env: tlsEnv(client()),
        timeoutMs: 90_000,
      });
      await expect(started).rejects.toThrow(/exited with 1 during start-up/);
      const refused = proxy.refused.slice(refusedBefore);
      expect(refused.length).toBeGreaterThan(0);
      if (code) expect(refused).toContain(code);
    },
    120_000,
  );

  it('rotated certificate files stop the orchestrator gracefully; started again it connects with the new certificate', async () => {
    const live = { certFile: join(certs.dir, 'rotating.crt'), keyFile: join(certs.dir, 'rotating.key') };
    const first = ca.client('before-rotation');
    copyFileSync(first.certFile, live.certFile);
    copyFileSync(first.keyFile, live.keyFile);
    const env = { ...tlsEnv(live), MANGO_TEMPORAL_CREDENTIALS_CHECK_SECONDS: '1' };
    const queue = `${taskQueue}-rotation`;
    const orchestrator = await startOrchestrator(stack.api.db.url, { taskQueue: queue, env });
    const exited = new Promise<number | null>((resolve) => orchestrator.child.once('exit', resolve));
    expect(proxy.accepted).toContain('before-rotation');
    // A rotation as cert-manager or a Secret update does it: new certificate and key in place.
    const next = ca.client('after-rotation');
    copyFileSync(next.certFile, live.certFile);
    copyFileSync(next.keyFile, live.keyFile);
    expect(await exited).toBe(0);
    expect(orchestrator.logs()).toContain('Temporal TLS certificate files changed');
    const again = await startOrchestrator(stack.api.db.url, { taskQueue: queue, env });
    try {
      expect(proxy.accepted).toContain('after-rotation');
    } finally {
      await again.stop();
    }
  }, 240_000);
});
