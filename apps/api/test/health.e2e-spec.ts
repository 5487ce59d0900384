import { Client } from 'pg';
import { adminUrl, httpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

async function admin(sql: string): Promise<void> {
  const c = new Client({ connectionString: adminUrl() });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

async function eventually(read: () => Promise<unknown>, want: unknown, tries = 50): Promise<unknown> {
  let last: unknown;
  for (let i = 0; i < tries; i++) {
    last = await read();
    if (JSON.stringify(last) === JSON.stringify(want)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  return last;
}

describe('health (docs/api-guide.md, Health)', () => {
  let api: ApiUnderTest;
  beforeAll(async () => {
    api = await startApi('health');
  });
  afterAll(() => api.close());

  it('/healthz answers without credentials', async () => {
    const res = await httpClient(api.url).get('/healthz');
    expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('/readyz reports a read-only database as not ready and recovers when it is writable again', async () => {
    const http = httpClient(api.url);
    const readyz = async () => {
      const r = await http.get('/readyz');
      return [r.status, r.body.checks.database];
    };
    expect(await readyz()).toEqual([200, 'ok']);
    // A failover to a read-only node: the database refuses writes and existing sessions are dropped.
    await admin(`ALTER DATABASE ${api.db.name} SET default_transaction_read_only = on`);
    await admin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${api.db.name}' AND pid <> pg_backend_pid()`,
    );
    expect(await eventually(readyz, [503, 'read_only'])).toEqual([503, 'read_only']);
    await admin(`ALTER DATABASE ${api.db.name} RESET default_transaction_read_only`);
    await admin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${api.db.name}' AND pid <> pg_backend_pid()`,
    );
    expect(await eventually(readyz, [200, 'ok'])).toEqual([200, 'ok']);
  });

  it('the process exits cleanly on SIGTERM', async () => {
    const code = await api.app.stop('SIGTERM');
    expect(code).toBe(0);
  });
});
