import { PgListener } from '@mango/persistence';
import { Client } from 'pg';
import { createEmptyDatabase, TestDatabase } from './test-database';

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('PgListener (real PostgreSQL)', () => {
  let db: TestDatabase;
  let admin: Client;

  beforeAll(async () => {
    db = await createEmptyDatabase('pglisten');
    admin = new Client({ connectionString: db.url });
    await admin.connect();
  });

  afterAll(async () => {
    await admin.end();
    await db.drop();
  });

  it('delivers payloads on its channel only, survives a killed backend, and stays down once closed', async () => {
    const payloads: string[] = [];
    let lost = 0;
    let reconnected = 0;
    const listener = new PgListener({
      url: db.url,
      channel: 'mango_listener_test',
      applicationName: 'mango-listener-test',
      onNotify: (p) => payloads.push(p),
      onLost: () => lost++,
      onReconnected: () => reconnected++,
    });
    await listener.start();
    const backends = async () =>
      (await admin.query("SELECT pid FROM pg_stat_activity WHERE application_name = 'mango-listener-test'"))
        .rows as Array<{ pid: number }>;
    try {
      await admin.query("NOTIFY mango_other_channel, 'nope'");
      await admin.query("NOTIFY mango_listener_test, 'one'");
      await until(() => payloads.includes('one'));
      expect(payloads).toEqual(['one']);

      const [first] = await backends();
      await admin.query('SELECT pg_terminate_backend($1)', [first!.pid]);
      await until(() => lost === 1);
      await until(() => reconnected === 1);
      await until(async () => (await backends()).some((b) => b.pid !== first!.pid));
      // The new connection may not be LISTENing yet: NOTIFY until it hears.
      await until(async () => {
        await admin.query("NOTIFY mango_listener_test, 'two'");
        return payloads.includes('two');
      });
    } finally {
      await listener.close();
    }
    await new Promise((r) => setTimeout(r, 500)); // longer than the first reconnect delay
    expect(await backends()).toEqual([]);
    expect(lost).toBe(1); // closing is not a loss and does not reconnect
    expect(reconnected).toBe(1);
  });
});
