/**
 * The append bench's floor transaction: what any durable, gapless append of one event must do, over a
 * bare node-postgres client (no Nest, no TypeORM, no auth, no admission). The same statements Mango's
 * append runs for one `user.interrupt` on an idle Session: BEGIN; the Session row locked FOR UPDATE (the
 * next sequence is taken on it; Mango's lock also reads every column and re-checks the API key); the one
 * append statement of libs/persistence (APPEND_SQL: event, outbox row, projection, both notices);
 * COMMIT. Both statements are named prepared statements, as Mango's are.
 */
import { APPEND_SQL, appendValues } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import type { ClientBase } from 'pg';

const LOCK_SQL = `SELECT last_seq, status FROM sessions
   WHERE id = $1 AND workspace_id = $2 AND deleted_at IS NULL FOR UPDATE`;

/** Appends one `user.interrupt` to `sessionId` and answers the event as stored (id, seq). */
export async function appendInterrupt(
  client: ClientBase,
  sessionId: string,
  workspaceId: string,
): Promise<{ id: string; seq: string }> {
  await client.query('BEGIN');
  try {
    const { rows } = await client.query<{ last_seq: string; status: string }>({
      name: 'floor_lock',
      text: LOCK_SQL,
      values: [sessionId, workspaceId],
    });
    if (!rows[0]) throw new Error(`session ${sessionId} not found`);
    const now = new Date();
    const seq = (BigInt(rows[0].last_seq) + 1n).toString();
    const id = newId('sessionEvent', now.getTime());
    await client.query({
      name: 'floor_append',
      text: APPEND_SQL,
      values: appendValues({
        sessionId,
        now,
        rows: [
          {
            id,
            seq,
            type: 'user.interrupt',
            body: {},
            idempotencyKey: null,
            toolUseId: null,
            processedAt: null,
            sessionThreadId: null,
          },
        ],
        outbox: [{ seq, kind: 'user.interrupt', sessionThreadId: null }],
        lastSeq: seq,
        status: rows[0].status,
      }),
    });
    await client.query('COMMIT');
    return { id, seq };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
