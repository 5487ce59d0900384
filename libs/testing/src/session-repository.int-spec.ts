import {
  attachSessionMemoryStores,
  createDataSource,
  SessionEntity,
  SessionLog,
  SessionRepository,
} from '@mango/persistence';
import { resumeStateFromLog, SESSION_EVENT_KINDS, SESSION_EVENT_TYPES } from '@mango/domain-sessions';
import { newId } from '@mango/platform-ids';
import type { DataSource } from 'typeorm';
import { insertSessionRow, insertWorkspaceAndEnvironment } from './session-rows';
import { createTestDatabase, TestDatabase } from './test-database';

/**
 * The Session repository and the Session log's resume read over real PostgreSQL (ADR 0005): the
 * sweeper's candidates and its SKIP LOCKED row lock, a model step's prompt inputs (frozen, and the
 * fallback read of a Session from before the freeze), and the start-from-log columns.
 */
describe('SessionRepository (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let sessions: SessionRepository;
  let log: SessionLog;
  let owner: { workspaceId: string; environmentId: string };

  beforeAll(async () => {
    db = await createTestDatabase('sessionrepo');
    ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
    sessions = new SessionRepository(ds);
    log = new SessionLog(ds);
    owner = await insertWorkspaceAndEnvironment(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  async function newSession(
    fields: Partial<Pick<SessionEntity, 'status' | 'agent' | 'promptInputs'>> & {
      updatedSecondsAgo?: number;
    } = {},
  ): Promise<string> {
    const updated = new Date(Date.now() - (fields.updatedSecondsAgo ?? 60) * 1000);
    return insertSessionRow(ds, owner, {
      status: fields.status ?? 'idle',
      agent: (fields.agent ?? {}) as never,
      promptInputs: (fields.promptInputs ?? null) as never,
      createdAt: updated,
      updatedAt: updated,
    });
  }

  it('sweeper candidates: running or rescheduling, not deleted, past the grace period, oldest first, bounded', async () => {
    await ds.query(`UPDATE sessions SET status = 'idle'`);
    const older = await newSession({ status: 'rescheduling', updatedSecondsAgo: 120 });
    const old = await newSession({ status: 'running', updatedSecondsAgo: 60 });
    await newSession({ status: 'running', updatedSecondsAgo: 1 }); // within the grace period
    await newSession({ status: 'idle', updatedSecondsAgo: 300 });
    await newSession({ status: 'terminated', updatedSecondsAgo: 300 });
    const deleted = await newSession({ status: 'running', updatedSecondsAgo: 300 });
    await ds.query('UPDATE sessions SET deleted_at = now() WHERE id = $1', [deleted]);
    expect(await sessions.staleRunningIds(5, 10)).toEqual([older, old]);
    expect(await sessions.staleRunningIds(5, 1)).toEqual([older]);
    // The turns-running gauge counts running (not rescheduling), undeleted Sessions, whatever their age.
    expect(await sessions.countRunning()).toBe(2);
  });

  it('the running lock skips a Session another transaction holds and one that moved on', async () => {
    const id = await newSession({ status: 'running' });
    expect(await sessions.withRunningLock(id, async () => 'ran')).toBe('ran');
    // Held by an append in flight: skipped, not waited for.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = ds.transaction(async (tx) => {
      await log.lock(tx, id);
      locked();
      await held;
    });
    await isLocked;
    const started = Date.now();
    expect(await sessions.withRunningLock(id, async () => 'ran')).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2000);
    release();
    await holder;
    await ds.query(`UPDATE sessions SET status = 'idle' WHERE id = $1`, [id]);
    expect(await sessions.withRunningLock(id, async () => 'ran')).toBeUndefined();
  });

  it('prompt inputs: frozen ones without a query; without them, read from skill_versions and the attachments', async () => {
    const skillId = newId('skill');
    await ds.query(
      `INSERT INTO skills (id, workspace_id, display_title, latest_version, next_version, created_at, updated_at)
       VALUES ($1, $2, 'pdf', 2, 3, now(), now())`,
      [skillId, owner.workspaceId],
    );
    for (const [version, name] of [
      [1, 'pdf-tools'],
      [2, 'pdf-tools-2'],
    ] as const)
      await ds.query(
        `INSERT INTO skill_versions (skill_id, version, workspace_id, name, description, directory, object_key,
                                     archive_size_bytes, archive_sha256, expanded_size_bytes, file_count, created_at)
         VALUES ($1, $2, $3, $4, 'Reads PDFs.', $4, $5, 1, 'x', 1, 1, now())`,
        [skillId, version, owner.workspaceId, name, `k/${skillId}/${version}`],
      );
    const storeId = newId('memoryStore');
    await ds.query(
      `INSERT INTO memory_stores (id, workspace_id, name, description, metadata, created_at, updated_at)
       VALUES ($1, $2, 'Notes', 'team notes', '{}', now(), now())`,
      [storeId, owner.workspaceId],
    );
    const pins = [
      { type: 'custom', skill_id: skillId, version: '2' },
      { type: 'custom', skill_id: newId('skill'), version: '1' }, // gone: left out
      { type: 'custom', skill_id: skillId, version: '1' },
    ];
    const legacy = await newSession({ agent: { skills: pins } });
    await ds.transaction((tx) =>
      attachSessionMemoryStores(tx, owner.workspaceId, legacy, [
        { memoryStoreId: storeId, access: 'read_only', instructions: 'Look here first.' },
      ]),
    );
    const expected = {
      skills: [
        { skillId, version: 2, name: 'pdf-tools-2', description: 'Reads PDFs.', path: 'skills/pdf-tools-2/' },
        { skillId, version: 1, name: 'pdf-tools', description: 'Reads PDFs.', path: 'skills/pdf-tools/' },
      ],
      memoryStores: [
        {
          name: 'Notes',
          mount_path: '/mnt/memory/notes',
          access: 'read_only',
          instructions: 'Look here first.',
        },
      ],
    };
    const legacyRow = (await ds.getRepository(SessionEntity).findOneBy({ id: legacy }))!;
    expect(legacyRow.promptInputs).toBeNull();
    expect(await sessions.promptInputs(ds.manager, legacyRow)).toEqual(expected);

    // A frozen Session answers what it froze, even after the attachment rows and versions are gone.
    const frozen = await newSession({
      agent: { skills: pins },
      promptInputs: expected as SessionEntity['promptInputs'],
    });
    await ds.query('DELETE FROM skill_versions WHERE skill_id = $1', [skillId]);
    const frozenRow = (await ds.getRepository(SessionEntity).findOneBy({ id: frozen }))!;
    let queries = 0;
    const counting = new Proxy(ds.manager, {
      get: (target, prop, receiver) => {
        if (prop === 'query' || prop === 'find' || prop === 'findOne') queries += 1;
        return Reflect.get(target, prop, receiver);
      },
    });
    expect(await sessions.promptInputs(counting, frozenRow)).toEqual(expected);
    expect(queries).toBe(0);
    // The legacy Session now reads what is left: no Skills, the attachment still there.
    expect(await sessions.promptInputs(ds.manager, legacyRow)).toEqual({
      skills: [],
      memoryStores: expected.memoryStores,
    });
  });

  it('resumeLog reads the status, deletion and the start-from-log columns in sequence order', async () => {
    expect(await log.resumeLog(newId('session'))).toEqual({ session: null, events: [] });
    const id = await newSession();
    const append = (events: Parameters<SessionLog['append']>[2]) =>
      ds.transaction(async (tx) => log.append(tx, (await log.lock(tx, id))!, events, new Date()));
    await append([{ type: 'user.message', body: { content: [] }, processed: false, runnable: true }]);
    await append([
      {
        type: 'session.status_running',
        body: {},
        processed: true,
        runnable: false,
        idempotencyKey: 'turn:1:running',
      },
      { type: 'agent.message', body: { content: [] }, processed: true, runnable: false },
    ]);
    await append([{ type: 'session.updated', body: { budget: null }, processed: true, runnable: false }]);
    await append([{ type: 'session.updated', body: { title: 't' }, processed: true, runnable: false }]);
    await append([
      {
        type: 'session.status_idle',
        body: { stop_reason: { type: 'end_turn' } },
        processed: true,
        runnable: false,
        idempotencyKey: 'turn:1:idle',
      },
    ]);
    const { session, events } = await log.resumeLog(id);
    expect(session).toEqual({ status: 'idle', deleted: false });
    expect(events).toEqual([
      { seq: '1', type: 'user.message', idempotencyKey: null, stopReason: null, budgetChanged: false },
      {
        seq: '2',
        type: 'session.status_running',
        idempotencyKey: 'turn:1:running',
        stopReason: null,
        budgetChanged: false,
      },
      { seq: '4', type: 'session.updated', idempotencyKey: null, stopReason: null, budgetChanged: true },
      { seq: '5', type: 'session.updated', idempotencyKey: null, stopReason: null, budgetChanged: false },
      {
        seq: '6',
        type: 'session.status_idle',
        idempotencyKey: 'turn:1:idle',
        stopReason: 'end_turn',
        budgetChanged: false,
      },
    ]);
    await ds.transaction(async (tx) => log.delete(tx, (await log.lock(tx, id))!, new Date()));
    expect((await log.resumeLog(id)).session).toEqual({ status: 'idle', deleted: true });
  });

  /** Every event of the Session, in the columns the resume fold reads, with no filter. */
  async function wholeLog(id: string) {
    const rows: Array<{
      seq: string;
      type: string;
      key: string | null;
      stop: string | null;
      budget: boolean;
    }> = await ds.query(
      `SELECT seq, type, idempotency_key AS key, body->'stop_reason'->>'type' AS stop,
                (type = 'session.updated' AND body ? 'budget') AS budget
           FROM session_events WHERE session_id = $1 ORDER BY seq`,
      [id],
    );
    return rows.map((r) => ({
      seq: r.seq,
      type: r.type,
      idempotencyKey: r.key,
      stopReason: r.stop,
      budgetChanged: r.budget,
    }));
  }

  it('a Session rebuilt from its log keeps its outcome loop and its pending user.define_outcome', async () => {
    const id = await newSession();
    const append = (events: Parameters<SessionLog['append']>[2]) =>
      ds.transaction(async (tx) => log.append(tx, (await log.lock(tx, id))!, events, new Date()));
    await append([
      { type: 'user.define_outcome', body: { description: 'd' }, processed: false, runnable: true },
    ]);
    const state = resumeStateFromLog((await log.resumeLog(id)).events);
    expect(state).toEqual(resumeStateFromLog(await wholeLog(id)));
    expect(state).toMatchObject({ outcomes: true, pending: 1, consumed: 0 });
  });

  it('folding the resume log equals folding the whole log, for every event kind, with and without a turn key', async () => {
    const id = await newSession();
    const append = (events: Parameters<SessionLog['append']>[2]) =>
      ds.transaction(async (tx) => log.append(tx, (await log.lock(tx, id))!, events, new Date()));
    const last = new Set(['session.status_terminated', 'session.deleted']);
    const kinds = [...new Set([...SESSION_EVENT_TYPES, ...SESSION_EVENT_KINDS])].filter((k) => !last.has(k));
    for (const [i, type] of kinds.entries()) {
      const body =
        type === 'session.updated'
          ? { budget: null }
          : type === 'session.status_idle'
            ? { stop_reason: { type: 'end_turn' } }
            : {};
      // Checked after each append: a keyed event is read whatever its type, and would hide a missed unkeyed one.
      for (const idempotencyKey of [undefined, `turn:${i + 1}:k${i}`]) {
        await append([
          { type, body, processed: true, runnable: false, ...(idempotencyKey ? { idempotencyKey } : {}) },
        ]);
        const partial = resumeStateFromLog((await log.resumeLog(id)).events);
        expect({ type, idempotencyKey, state: partial }).toEqual({
          type,
          idempotencyKey,
          state: resumeStateFromLog(await wholeLog(id)),
        });
      }
    }
    for (const type of last) {
      await append([{ type, body: {}, processed: true, runnable: false }]);
      expect(resumeStateFromLog((await log.resumeLog(id)).events)).toEqual(
        resumeStateFromLog(await wholeLog(id)),
      );
    }
  });
});
