import {
  SESSION_EVENT_TYPES,
  THREAD_LIFECYCLE_EVENT_TYPES,
  THREAD_MESSAGE_EVENT_TYPES,
  visibleOn,
} from '@mango/domain-sessions';
import { createDataSource, SessionEventEntity } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import {
  createTestDatabase,
  insertSessionRow,
  insertWorkspaceAndEnvironment,
  TestDatabase,
} from '@mango/testing';
import type { DataSource } from 'typeorm';
import { threadEventFilter } from './session-thread-reads';

/**
 * The Thread history read's SQL (`threadEventFilter`) is the visibility rule (`visibleOn`) over real
 * PostgreSQL: every event kind, on the primary and on a delegate, with each tool permission, reads back
 * exactly the events the pure rule shows on each stream.
 */
describe('Thread history filter = visibleOn (real PostgreSQL)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  const sessionId = newId('session');
  const primary = 'sthr_' + sessionId.slice('sesn_'.length);
  const child = newId('sessionThread');
  const sibling = newId('sessionThread');

  beforeAll(async () => {
    db = await createTestDatabase('threadreads');
    ds = await createDataSource({ url: db.url, poolSize: 2 }).initialize();
    await insertSessionRow(ds, await insertWorkspaceAndEnvironment(ds), { id: sessionId });
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('reads back, for the primary and a delegate, exactly the events visibleOn shows', async () => {
    const types = [...SESSION_EVENT_TYPES, ...THREAD_LIFECYCLE_EVENT_TYPES, ...THREAD_MESSAGE_EVENT_TYPES];
    const rows: Array<{ type: string; owner: string | null; permission: string | null }> = [];
    for (const type of types)
      for (const owner of [null, child, sibling])
        for (const permission of type.endsWith('tool_use') ? ['allow', 'ask', 'deny'] : [null])
          rows.push({ type, owner, permission });
    await ds.query(
      `INSERT INTO session_events (id, session_id, seq, type, body, session_thread_id, created_at)
       SELECT 'sevt_' || lpad(n::text, 26, '0'), $1, n, type, body, owner, now()
         FROM unnest($2::text[], $3::jsonb[], $4::text[]) WITH ORDINALITY AS t(type, body, owner, n)`,
      [
        sessionId,
        rows.map((r) => r.type),
        rows.map((r) => JSON.stringify(r.permission ? { evaluated_permission: r.permission } : {})),
        rows.map((r) => r.owner),
      ],
    );
    for (const stream of [
      { kind: 'thread' as const, threadId: primary, primary: true },
      { kind: 'thread' as const, threadId: child, primary: false },
    ]) {
      const filter = threadEventFilter(stream);
      const read = await ds.manager
        .createQueryBuilder(SessionEventEntity, 'e')
        .where('e.session_id = :sessionId', { sessionId })
        .andWhere(filter.where, filter.params)
        .orderBy('e.seq', 'ASC')
        .getMany();
      const expected = rows
        .map((r, i) => ({ ...r, seq: String(i + 1) }))
        .filter((r) =>
          visibleOn(stream, { type: r.type, sessionThreadId: r.owner, evaluatedPermission: r.permission }),
        )
        .map((r) => r.seq);
      expect(read.map((e) => e.seq)).toEqual(expected);
      expect(expected.length).toBeGreaterThan(10);
    }
  });
});
