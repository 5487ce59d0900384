import { newId } from '@mango/platform-ids';
import { httpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/** 16 concurrent pollers, 1,000 items: every item is claimed (and acked) exactly once, and nothing deadlocks. */
describe('Work claims under concurrency (real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;
  beforeAll(async () => {
    api = await startApi('concurrency');
  });
  afterAll(() => api.close());

  it('16 pollers × 1,000 items: one winner per item, no lost or duplicated claims', async () => {
    const ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    const envId = (await ws.post('/v1/environments', { name: 'busy' })).body.id;
    const key = (await api.issueKey('wrkspc_default', envId)).api_key;
    const ids = Array.from({ length: 1000 }, () => newId('work'));
    await api.sql(
      `INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, created_at)
       SELECT id, 'wrkspc_default', $2, 'session', 'sesn_' || substr(id, 6), 'queued', '{}', now() FROM unnest($1::text[]) AS id`,
      [ids, envId],
    );
    const claims = new Map<string, number>();
    const poller = async (i: number) => {
      const sup = httpClient(api.url, key);
      for (;;) {
        const polled = await sup.get(
          `/v1/environments/${envId}/work/poll?worker_id=p${i}&reclaim_older_than_ms=600000`,
          { contract: false },
        );
        expect(polled.status).toBe(200);
        if (!polled.body.id) return;
        claims.set(polled.body.id, (claims.get(polled.body.id) ?? 0) + 1);
        const acked = await sup.post(`/v1/environments/${envId}/work/${polled.body.id}/ack`, undefined, {
          contract: false,
        });
        expect(acked.body.state).toBe('starting');
      }
    };
    await Promise.all(Array.from({ length: 16 }, (_, i) => poller(i)));
    expect(claims.size).toBe(1000);
    expect([...claims.values()].every((n) => n === 1)).toBe(true);
    const rows = await api.sql<{ state: string; claim_count: number; n: number }>(
      'SELECT state, claim_count, count(*)::int AS n FROM work_items WHERE environment_id = $1 GROUP BY 1, 2',
      [envId],
    );
    expect(rows).toEqual([{ state: 'starting', claim_count: 1, n: 1000 }]);
    const stats = await ws.get(`/v1/environments/${envId}/work/stats`);
    expect(stats.body).toMatchObject({ depth: 0, pending: 0, workers_polling: 16 });
  }, 180_000);
});
