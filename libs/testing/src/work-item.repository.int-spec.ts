import { createHash, randomBytes } from 'node:crypto';
import { DomainError } from '@mango/domain-kernel';
import { ack, claim } from '@mango/domain-work-lease';
import {
  ackOne,
  claimOne,
  continueSessionWork,
  createDataSource,
  ensureSessionWork,
  requireLiveLease,
  stopSessionWork,
  toLease,
  WorkItemEntity,
  type WorkItemView,
} from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import type { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from './test-database';

/** A stored row's columns that the one-statement claim and Ack return (`WorkItemView`). */
const viewOf = (row: WorkItemEntity): WorkItemView => ({
  id: row.id,
  environmentId: row.environmentId,
  kind: row.kind,
  sessionId: row.sessionId,
  state: row.state,
  metadata: row.metadata,
  result: row.result,
  expiresAt: row.expiresAt,
  createdAt: row.createdAt,
  acknowledgedAt: row.acknowledgedAt,
  startedAt: row.startedAt,
  latestHeartbeatAt: row.latestHeartbeatAt,
  stopRequestedAt: row.stopRequestedAt,
  stoppedAt: row.stoppedAt,
});

/** The Work item repository's Session-facing functions on real PostgreSQL (ADR 0008). */
describe('Work item repository (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const ws = 'wrkspc_default';
  let envId: string;

  beforeAll(async () => {
    db = await createTestDatabase('workrepo');
    ds = createDataSource({ url: db.url, poolSize: 4 });
    await ds.initialize();
    envId = newId('environment');
    await ds.query(
      `INSERT INTO environments (id, workspace_id, name, config, metadata, created_at, updated_at)
       VALUES ($1, $2, $1, '{"type":"self_hosted"}', '{}', now(), now())`,
      [envId, ws],
    );
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  async function session(
    status = 'running',
  ): Promise<{ id: string; workspaceId: string; environmentId: string }> {
    const id = newId('session');
    await ds.query(
      `INSERT INTO sessions (id, workspace_id, environment_id, agent_id, agent_version, agent, status, metadata,
                             usage, last_seq, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 1, '{}', $5, '{}', '{}', 0, now(), now())`,
      [id, ws, envId, newId('agent'), status],
    );
    return { id, workspaceId: ws, environmentId: envId };
  }

  /** Makes the Session's live item active with a fresh token whose lease ends `leaseMs` from now. */
  async function activate(workId: string, leaseMs: number): Promise<Buffer> {
    const digest = createHash('sha256').update(randomBytes(16)).digest();
    await ds.query(
      `UPDATE work_items SET state = 'active', token_digest = $2, claimed_at = now(), acknowledged_at = now(),
              started_at = now(), latest_heartbeat_at = now(), ttl_seconds = 60,
              lease_expires_at = now() + make_interval(secs => $3::double precision / 1000)
        WHERE id = $1`,
      [workId, digest, leaseMs],
    );
    return digest;
  }

  const items = async (sessionId: string) =>
    (await ds.query(
      `SELECT id, state, stopped_at, stop_requested_at FROM work_items WHERE session_id = $1 ORDER BY id`,
      [sessionId],
    )) as Array<{ id: string; state: string; stopped_at: Date | null; stop_requested_at: Date | null }>;

  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => 'allowed',
      (e: unknown) => (e instanceof DomainError ? `${e.code}: ${e.message}` : e),
    );

  it('ensureSessionWork creates one queued item, coalesces while it is live, and NOTIFYs its Environment on commit', async () => {
    const s = await session();
    const notices: string[] = [];
    const listener = await (ds.driver as any).master.connect();
    try {
      listener.on('notification', (n: { channel: string; payload: string }) =>
        notices.push(`${n.channel}:${n.payload}`),
      );
      await listener.query('LISTEN mango_work');
      const first = await ds.transaction((tx) => ensureSessionWork(tx, s, new Date()));
      const second = await ds.transaction((tx) => ensureSessionWork(tx, s, new Date()));
      expect(first).toMatch(/^work_/);
      expect(second).toBeNull();
      expect((await items(s.id)).map((i) => i.state)).toEqual(['queued']);
      for (let i = 0; i < 100 && notices.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(notices).toEqual([`mango_work:${envId}`]);
    } finally {
      await listener.query('UNLISTEN *');
      listener.release();
    }
  });

  it('stopSessionWork stops the live item through the forced Stop (stopped_at, stop_requested_at) and leaves stopped ones alone', async () => {
    const s = await session();
    const workId = (await ds.transaction((tx) => ensureSessionWork(tx, s, new Date())))!;
    await activate(workId, 60_000);
    const at = new Date();
    expect(await ds.transaction((tx) => stopSessionWork(tx, s.id, at))).toEqual([workId]);
    const [row] = await items(s.id);
    expect(row).toMatchObject({ id: workId, state: 'stopped' });
    expect(new Date(row!.stopped_at!).getTime()).toBe(at.getTime());
    expect(new Date(row!.stop_requested_at!).getTime()).toBe(at.getTime());
    // Idempotent: nothing live is left.
    expect(await ds.transaction((tx) => stopSessionWork(tx, s.id, new Date()))).toEqual([]);
    // The partial unique index frees the Session for new Work after the stop.
    expect(await ds.transaction((tx) => ensureSessionWork(tx, s, new Date()))).toMatch(/^work_/);
  });

  it('continueSessionWork re-queues only a running Session', async () => {
    const running = await session('running');
    const idle = await session('idle');
    expect(await ds.transaction((tx) => continueSessionWork(tx, running.id, new Date()))).toMatch(/^work_/);
    expect(await ds.transaction((tx) => continueSessionWork(tx, running.id, new Date()))).toBeNull();
    expect(await ds.transaction((tx) => continueSessionWork(tx, idle.id, new Date()))).toBeNull();
    expect(await items(idle.id)).toEqual([]);
  });

  it("requireLiveLease admits only the item's current token with a live lease, for its own Session", async () => {
    const s = await session();
    const other = await session();
    const workId = (await ds.transaction((tx) => ensureSessionWork(tx, s, new Date())))!;
    // Queued (claimed or not): not usable until Ack.
    const queuedDigest = createHash('sha256').update('q').digest();
    await ds.query(`UPDATE work_items SET token_digest = $2, claimed_at = now() WHERE id = $1`, [
      workId,
      queuedDigest,
    ]);
    expect(
      await refusal(
        ds.transaction((tx) => requireLiveLease(tx, { workId, tokenDigest: queuedDigest }, s.id)),
      ),
    ).toBe('authentication: the Work token is not usable until the Work is acknowledged');
    const digest = await activate(workId, 60_000);
    expect(
      await refusal(ds.transaction((tx) => requireLiveLease(tx, { workId, tokenDigest: digest }, s.id))),
    ).toBe('allowed');
    // Another token (a reclaim rotated it), another Session, or an unknown item: stale.
    const stale = 'authentication: the Work token is no longer valid';
    expect(
      await refusal(
        ds.transaction((tx) => requireLiveLease(tx, { workId, tokenDigest: queuedDigest }, s.id)),
      ),
    ).toBe(stale);
    expect(
      await refusal(ds.transaction((tx) => requireLiveLease(tx, { workId, tokenDigest: digest }, other.id))),
    ).toBe(stale);
    expect(
      await refusal(
        ds.transaction((tx) => requireLiveLease(tx, { workId: newId('work'), tokenDigest: digest }, s.id)),
      ),
    ).toBe(stale);
    // An expired lease (PostgreSQL's clock) and a stopped item are refused by the state machine.
    const expired = await activate(workId, -1);
    expect(
      await refusal(ds.transaction((tx) => requireLiveLease(tx, { workId, tokenDigest: expired }, s.id))),
    ).toBe('authentication: the Work lease has expired');
    const live = await activate(workId, 60_000);
    await ds.transaction((tx) => stopSessionWork(tx, s.id, new Date()));
    expect(
      await refusal(ds.transaction((tx) => requireLiveLease(tx, { workId, tokenDigest: live }, s.id))),
    ).toBe('authentication: the Work is stopped');
  });

  it('requireLiveLease holds the item FOR SHARE: a concurrent stop waits for the writing transaction', async () => {
    const s = await session();
    const workId = (await ds.transaction((tx) => ensureSessionWork(tx, s, new Date())))!;
    const digest = await activate(workId, 60_000);
    const order: string[] = [];
    let release!: () => void;
    let held!: () => void;
    const isHeld = new Promise<void>((r) => (held = r));
    const writer = ds.transaction(async (tx) => {
      await requireLiveLease(tx, { workId, tokenDigest: digest }, s.id);
      held();
      await new Promise<void>((r) => (release = r));
      order.push('write committed');
    });
    await isHeld;
    const stopper = ds.transaction(async (tx) => {
      await stopSessionWork(tx, s.id, new Date());
      order.push('stopped');
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(order).toEqual([]);
    release();
    await Promise.all([writer, stopper]);
    expect(order).toEqual(['write committed', 'stopped']);
  });

  describe.each([
    ['as named prepared statements (on the DataSource, as the API runs them)', true],
    ['as text inside a transaction (on an EntityManager)', false],
  ])('the one-statement claim and Ack, %s', (_how, prepared) => {
    let claimEnv: string;
    let keyId: string;
    const digest = () => createHash('sha256').update(randomBytes(16)).digest();
    const target = () => (prepared ? ds : ds.manager);
    const load = async (id: string) => (await ds.manager.findOneByOrFail(WorkItemEntity, { id }))!;

    beforeAll(async () => {
      claimEnv = newId('environment');
      keyId = newId('apiKey');
      await ds.query(
        `INSERT INTO environments (id, workspace_id, name, config, metadata, created_at, updated_at)
         VALUES ($1, $2, $1, '{"type":"self_hosted"}', '{}', now(), now())`,
        [claimEnv, ws],
      );
      await ds.query(
        `INSERT INTO api_keys (id, workspace_id, environment_id, label, digest, key_hint, created_at)
         VALUES ($1, $2, $3, 'bench', $4, 'x', now())`,
        [keyId, ws, claimEnv, digest()],
      );
    });

    const enqueue = async () => {
      const s = { id: newId('session'), workspaceId: ws, environmentId: claimEnv };
      return (await ds.transaction((tx) => ensureSessionWork(tx, s, new Date())))!;
    };
    const poll = (reclaimOlderThanMs = 5_000, tokenDigest = digest()) =>
      claimOne(target(), {
        keyId,
        environmentId: claimEnv,
        workerId: 'w1',
        reclaimOlderThanMs,
        tokenDigest,
      });

    it('claims the oldest unclaimed item exactly as claim() does, and Ack moves it exactly as ack() does', async () => {
      const first = await enqueue();
      await enqueue();
      const before = await load(first);
      const tokenDigest = digest();
      const out = await poll(5_000, tokenDigest);
      if (out.kind !== 'claimed') throw new Error(`expected a claim, got ${out.kind}`);
      expect(out.row.id).toBe(first);
      expect(out.previous).toEqual({ state: 'queued', claimedAt: null });
      const stored = await load(first);
      expect(toLease(stored)).toEqual(claim(toLease(before), out.now, 5_000).next);
      expect(stored).toMatchObject({ workerId: 'w1', claimCount: 1 });
      expect(stored.tokenDigest!.equals(tokenDigest)).toBe(true);
      // The statement returns the stored row's view columns (what the wire form reads).
      expect(out.row).toEqual(viewOf(stored));

      const acked = await ackOne(target(), { keyId, environmentId: claimEnv, workId: first });
      const ackedRow = await load(first);
      expect(acked).toEqual(viewOf(ackedRow));
      expect(toLease(ackedRow)).toEqual(ack(toLease(stored), ackedRow.acknowledgedAt!).next);
      // A repeat is not the common case: the transactional path answers it.
      expect(await ackOne(target(), { keyId, environmentId: claimEnv, workId: first })).toBeNull();
      // Another Environment's item is never touched.
      expect(await ackOne(target(), { keyId, environmentId: envId, workId: first })).toBeNull();
    });

    it('reclaims a lost lease first and a stale tentative claim only after reclaim_older_than_ms; at most one winner', async () => {
      // Drain what the previous case left.
      while ((await poll(600_000)).kind === 'claimed');
      const lost = await enqueue();
      await activate(lost, -1);
      const stale = await enqueue();
      const out = await poll(600_000);
      expect(out).toMatchObject({ kind: 'claimed', row: { id: lost }, previous: { state: 'active' } });
      expect(await load(lost)).toMatchObject({
        state: 'queued',
        acknowledgedAt: null,
        leaseExpiresAt: null,
        claimCount: 1,
      });
      expect(await poll(600_000)).toMatchObject({ kind: 'claimed', row: { id: stale } });
      expect((await poll(600_000)).kind).toBe('none');
      expect(await poll(0)).toMatchObject({ kind: 'claimed', previous: { state: 'queued' } });
      // Concurrent pollers on one item: exactly one claims it.
      while ((await poll(600_000)).kind === 'claimed');
      const one = await enqueue();
      const outs = await Promise.all(Array.from({ length: 4 }, () => poll(600_000)));
      expect(
        outs.filter((o) => o.kind === 'claimed').map((o) => (o as { row: { id: string } }).row.id),
      ).toEqual([one]);
    });

    it('concurrent pollers draining the queue never claim one item twice, and each claim Acks once', async () => {
      while ((await poll(600_000)).kind === 'claimed');
      const queued = new Set<string>();
      for (let i = 0; i < 30; i++) queued.add(await enqueue());
      const claimed: string[] = [];
      const acked: string[] = [];
      await Promise.all(
        Array.from({ length: 6 }, async () => {
          for (;;) {
            const out = await poll(600_000);
            if (out.kind !== 'claimed') return;
            claimed.push(out.row.id);
            const a = await ackOne(target(), { keyId, environmentId: claimEnv, workId: out.row.id });
            if (a) acked.push(a.id);
          }
        }),
      );
      expect(new Set(claimed).size).toBe(claimed.length);
      expect(new Set(claimed)).toEqual(queued);
      expect(acked.sort()).toEqual([...claimed].sort());
      // Each claimed exactly once (no reclaim of a live claim).
      const rows: Array<{ claim_count: number; state: string }> = await ds.query(
        'SELECT claim_count, state FROM work_items WHERE id = ANY($1)',
        [[...queued]],
      );
      expect(rows.every((r) => r.claim_count === 1 && r.state === 'starting')).toBe(true);
    });

    it('hands overdue items to the reconciling path, and refuses a revoked key', async () => {
      const overdue = newId('work');
      await ds.query(
        `INSERT INTO work_items (id, workspace_id, environment_id, kind, state, metadata, created_at, expires_at)
         VALUES ($1, $2, $3, 'healthcheck', 'queued', '{}', now() - interval '3 minutes', now() - interval '1 minute')`,
        [overdue, ws, claimEnv],
      );
      expect(await poll()).toMatchObject({ kind: 'overdue', overdue: [overdue] });
      expect((await load(overdue)).state).toBe('queued');
      await ds.query(`UPDATE work_items SET state = 'stopped', stopped_at = expires_at WHERE id = $1`, [
        overdue,
      ]);
      const pending = await enqueue();
      expect(await poll()).toMatchObject({ kind: 'claimed', row: { id: pending } });
      await ds.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [keyId]);
      await enqueue();
      expect(await poll()).toEqual({ kind: 'revoked' });
      expect(await ackOne(target(), { keyId, environmentId: claimEnv, workId: overdue })).toBeNull();
      // A claim taken before the revocation cannot be Acked with the revoked key: nothing changes.
      expect(await ackOne(target(), { keyId, environmentId: claimEnv, workId: pending })).toBeNull();
      expect(await load(pending)).toMatchObject({ state: 'queued', acknowledgedAt: null });
    });
  });

  /**
   * PostgreSQL caches a generic plan for the prepared claim, planned from whatever statistics it had then
   * (an API just started: an empty queue). That plan must still read the queue from its front when the
   * queue and the table are long: a sort of every queued row, or a sequential scan of the table, on each
   * claim makes draining a queue quadratic.
   */
  it("the claim's generic plan, from statistics taken with an empty queue, reads a few rows of a long queue", async () => {
    const env = newId('environment');
    const key = newId('apiKey');
    await ds.query(
      `INSERT INTO environments (id, workspace_id, name, config, metadata, created_at, updated_at)
       VALUES ($1, $2, $1, '{"type":"self_hosted"}', '{}', now(), now())`,
      [env, ws],
    );
    await ds.query(
      `INSERT INTO api_keys (id, workspace_id, environment_id, label, digest, key_hint, created_at)
       VALUES ($1, $2, $3, 'plan', $4, 'x', now())`,
      [key, ws, env, createHash('sha256').update(randomBytes(16)).digest()],
    );
    const insert = (n: number, state: string, lease: string) =>
      ds.query(
        `INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, created_at,
                                 claimed_at, acknowledged_at, lease_expires_at, ttl_seconds)
         SELECT id, $2, $3, 'session', 'sesn_' || substr(id, 6), $4, '{}', clock_timestamp(), ${lease}
           FROM unnest($1::text[]) id`,
        [Array.from({ length: n }, () => newId('work')), ws, env, state],
      );
    // Claimed and acknowledged history, statistics taken while nothing was queued; then a long queue.
    await insert(500, 'starting', "now(), now(), now() + interval '60 seconds', 60");
    await ds.query('ANALYZE work_items');
    await insert(3000, 'queued', 'NULL, NULL, NULL, NULL');

    let text = '';
    const capture = { query: async (sql: string) => ((text = sql), [] as never) };
    await claimOne(capture, {
      keyId: key,
      environmentId: env,
      workerId: null,
      reclaimOlderThanMs: 60_000,
      tokenDigest: Buffer.alloc(32),
    });
    const plan = await ds.transaction(async (tx) => {
      await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await tx.query(`PREPARE claim_plan_check AS ${text}`);
      try {
        const [row] = await tx.query(
          `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim_plan_check('${key}', '${env}', NULL, 60000, sha256('x'))`,
        );
        return row['QUERY PLAN'][0].Plan as PlanNode;
      } finally {
        await tx.query('DEALLOCATE claim_plan_check');
      }
    });
    const reads: string[] = [];
    const walk = (n: PlanNode) => {
      if (n['Relation Name'] === 'work_items') {
        const rows = n['Actual Rows'] * n['Actual Loops'] + (n['Rows Removed by Filter'] ?? 0);
        reads.push(`${n['Node Type']} ${n['Index Name'] ?? ''}: ${rows}`);
      }
      n.Plans?.forEach(walk);
    };
    walk(plan);
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((r) => r.startsWith('Seq Scan') || Number(r.split(': ')[1]) > 20)).toEqual([]);
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}
