import { Agent, get } from 'node:http';
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

  it("keeps an idle connection 65 s and says so (Keep-Alive), not Node's 5 s that raced pooled clients", async () => {
    const keepAlive = await new Promise<string | undefined>((resolve, reject) =>
      get(`${api.url}/healthz`, { agent: new Agent({ keepAlive: true }) }, (res) => {
        res.resume();
        resolve(res.headers['keep-alive'] as string | undefined);
      }).on('error', reject),
    );
    expect(keepAlive).toBe('timeout=65');
  });

  it('responses carry no ETag, and a bodiless POST is answered as one whose body is {}', async () => {
    const health = await fetch(`${api.url}/healthz`);
    expect(health.headers.get('etag')).toBeNull();
    const { api_key } = await api.issueKey('wrkspc_default');
    const post = async (init: RequestInit) => {
      const res = await fetch(`${api.url}/v1/environments`, {
        method: 'POST',
        ...init,
        headers: { authorization: `Bearer ${api_key}`, ...init.headers },
      });
      const body = (await res.json()) as { error?: { type: string; message: string } };
      return [res.status, res.headers.get('etag'), body.error];
    };
    const bodiless = await post({});
    expect(bodiless[0]).toBe(400);
    expect(bodiless).toEqual(await post({ body: '{}', headers: { 'content-type': 'application/json' } }));
  });

  it('a JSON response is UTF-8 JSON with its status, byte length and request id (Nest reply written directly)', async () => {
    const { api_key } = await api.issueKey('wrkspc_default');
    const name = 'é ☃ 𝄞 "quoted"';
    const res = await fetch(`${api.url}/v1/environments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    expect(JSON.parse(bytes.toString('utf8'))).toMatchObject({ type: 'environment', name });
    // A list (an object holding an array) and HEAD: the same headers, and HEAD has no body.
    const list = await fetch(`${api.url}/v1/environments`, {
      headers: { authorization: `Bearer ${api_key}` },
    });
    expect(list.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(((await list.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    const head = await fetch(`${api.url}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await head.text()).toBe('');
  });

  it('the process exits cleanly on SIGTERM', async () => {
    const code = await api.app.stop('SIGTERM');
    expect(code).toBe(0);
  });
});
