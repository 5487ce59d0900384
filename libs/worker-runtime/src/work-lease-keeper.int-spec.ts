import { decodeWorkSecret, MangoClient, PreconditionFailedError } from '@mango/sdk';
import { ApiUnderTest, freePort, httpClient, HttpClient, startApi, TcpGate } from '@mango/testing';
import { WorkLeaseKeeper } from './work-lease-keeper';

describe('WorkLeaseKeeper against the real API', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;

  beforeAll(async () => {
    api = await startApi('keeper');
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
  }, 120_000);

  afterAll(async () => {
    await api?.close();
  });

  /** An acked healthcheck Work item, and a Work-token client that reaches the API through a fresh TcpGate. */
  async function leasedWork(name: string, timeoutMs: number) {
    const envId = (await ws.post('/v1/environments', { name })).body.id as string;
    const worker = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
    expect((await ws.post(`/v1/environments/${envId}/work`, { data: { type: 'healthcheck' } })).status).toBe(
      201,
    );
    const polled = (await worker.get(`/v1/environments/${envId}/work/poll?block_ms=5000`)).body;
    expect((await worker.post(`/v1/environments/${envId}/work/${polled.id}/ack`)).status).toBe(200);
    const gate = new TcpGate(await freePort(), new URL(api.url));
    await gate.open();
    const client = new MangoClient({
      baseUrl: `http://127.0.0.1:${gate.port}`,
      apiKey: decodeWorkSecret(polled.secret).sessions_token,
      maxRetries: 0,
      timeoutMs,
    });
    return { envId, workId: polled.id as string, gate, client };
  }

  it('keeps retrying a failed renewal while the lease can be alive: an outage longer than five tries but shorter than the TTL keeps the lease', async () => {
    const { envId, workId, gate, client } = await leasedWork('keeper-pool', 5_000);
    const lost: string[] = [];
    // Renewed every 7 s. Five tries after a failure (the old limit) are spent within ~8 s of it.
    const keeper = new WorkLeaseKeeper({
      client,
      environmentId: envId,
      workId,
      ttlSeconds: 21,
      onLost: (reason) => lost.push(reason),
      onStopRequested: () => lost.push('stopping'),
    });
    await keeper.start();
    try {
      await gate.close(); // right after the first heartbeat: the renewal at 7 s fails
      await new Promise((r) => setTimeout(r, 16_000));
      const before = gate.count('/heartbeat');
      await gate.open();
      for (let i = 0; i < 100 && gate.count('/heartbeat') === before; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(gate.count('/heartbeat')).toBeGreaterThan(before); // it was still retrying, and got through
      expect(lost).toEqual([]);
      expect(keeper.lost).toBe(false);
      // The renewal extended the lease past the first one's end (21 s after it): still active at 23 s.
      await new Promise((r) => setTimeout(r, 6_000));
      const item = (await ws.get(`/v1/environments/${envId}/work/${workId}`)).body;
      expect(item.state).toBe('active');
    } finally {
      await keeper.close();
      await gate.close();
    }
  }, 120_000);

  it('fences itself when a renewal cannot get through before the lease could expire: onLost, no later than the TTL', async () => {
    const { envId, workId, gate, client } = await leasedWork('keeper-fence', 2_000);
    const lost: Array<{ reason: string; at: number }> = [];
    const keeper = new WorkLeaseKeeper({
      client,
      environmentId: envId,
      workId,
      ttlSeconds: 6,
      onLost: (reason) => lost.push({ reason, at: Date.now() }),
      onStopRequested: () => lost.push({ reason: 'stopping', at: Date.now() }),
    });
    const sent = Date.now();
    await keeper.start(); // the last renewal that gets through
    try {
      await gate.close(); // for good: every later renewal fails
      for (let i = 0; i < 200 && lost.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(lost.map((l) => l.reason)).toEqual(['lease not renewed before it could expire']);
      expect(keeper.lost).toBe(true);
      // The server's lease runs at least 6 s from its receipt of that heartbeat, so the fence (6 s from its
      // send, plus the event loop's delay) comes before another worker could claim the Work.
      expect(lost[0]!.at - sent).toBeGreaterThanOrEqual(6_000);
      expect(lost[0]!.at - sent).toBeLessThan(9_000);
    } finally {
      await keeper.close();
      await gate.close();
    }
  }, 60_000);

  /** A keeper whose loss and stop callbacks are not under test (only its first heartbeat is). */
  const quietKeeper = (
    client: MangoClient,
    environmentId: string,
    workId: string,
    extra: { ttlSeconds?: number; firstBeatRetryMs?: number } = {},
  ) =>
    new WorkLeaseKeeper({
      client,
      environmentId,
      workId,
      ...extra,
      onLost: () => undefined,
      onStopRequested: () => undefined,
    });

  it('retries a first heartbeat that cannot get through (the API unreachable or answering 5xx for a moment): the item still becomes active', async () => {
    const { envId, workId, gate, client } = await leasedWork('keeper-first', 2_000);
    const keeper = quietKeeper(client, envId, workId, { ttlSeconds: 30 });
    await gate.close(); // before the first heartbeat: refused connections, as while PostgreSQL restarts
    const starting = keeper.start();
    setTimeout(() => void gate.open(), 1_500);
    try {
      await starting;
      expect((await ws.get(`/v1/environments/${envId}/work/${workId}`)).body.state).toBe('active');
      // A second first heartbeat on the same lease is refused (412) at once, never retried.
      const other = quietKeeper(client, envId, workId);
      const t0 = Date.now();
      await expect(other.start()).rejects.toBeInstanceOf(PreconditionFailedError);
      expect(Date.now() - t0).toBeLessThan(1_000);
    } finally {
      await keeper.close();
      await gate.close();
    }
  }, 60_000);

  it('gives a first heartbeat up once its retry budget is spent', async () => {
    const { envId, workId, gate, client } = await leasedWork('keeper-first-gone', 1_000);
    const keeper = quietKeeper(client, envId, workId, { firstBeatRetryMs: 2_000 });
    await gate.close();
    const t0 = Date.now();
    await expect(keeper.start()).rejects.toThrow();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2_000);
    expect(Date.now() - t0).toBeLessThan(6_000);
    expect((await ws.get(`/v1/environments/${envId}/work/${workId}`)).body.state).toBe('starting');
  }, 60_000);
});
