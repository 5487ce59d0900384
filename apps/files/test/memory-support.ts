import { digestCredential, generateCredential } from '@mango/feature-auth';
import { parseMemoryAttachments } from '@mango/domain-memory';
import { attachSessionMemoryStores } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import { httpClient } from '@mango/testing';
import type { FilesUnderTest } from './support';

export type Client = ReturnType<typeof httpClient>;

/** Sessions, attachments and Work tokens made directly in the database, for Memory access tests. */
export function memoryFixtures(files: FilesUnderTest) {
  const sql = files.sql;
  return {
    /** A Session with the given `memory_store` resources (attached the way Session create does). */
    async createSession(workspaceId: string, environmentId: string, resources: unknown[] = []) {
      const id = newId('session');
      await files.ds.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO sessions (id, workspace_id, environment_id, agent_id, agent_version, agent, status,
                                 metadata, usage, last_seq, created_at, updated_at)
           VALUES ($1, $2, $3, $4, 1, '{}', 'running', '{}', '{}', 0, now(), now())`,
          [id, workspaceId, environmentId, newId('agent')],
        );
        await attachSessionMemoryStores(tx, workspaceId, id, parseMemoryAttachments(resources));
      });
      return id;
    },
    /** A live (acked, heartbeating) Work token of the Session's Work item. */
    async sessionWorkToken(workspaceId: string, environmentId: string, sessionId: string) {
      const token = generateCredential('workToken');
      const workId = newId('work');
      await sql(
        `INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, token_digest,
                                 created_at, claimed_at, acknowledged_at, started_at, latest_heartbeat_at,
                                 lease_expires_at, ttl_seconds)
         VALUES ($1, $2, $3, 'session', $4, 'active', '{}', $5, now(), now(), now(), now(), now(),
                 now() + interval '5 minutes', 300)`,
        [workId, workspaceId, environmentId, sessionId, digestCredential(token)],
      );
      return { token, workId };
    },
    /** Reclaim: the item goes back to the queue with a new token; the old one is dead. */
    async reclaim(workId: string) {
      await sql(
        `UPDATE work_items SET state = 'queued', token_digest = $2, lease_expires_at = NULL,
                acknowledged_at = NULL, started_at = NULL, latest_heartbeat_at = NULL WHERE id = $1`,
        [workId, digestCredential(generateCredential('workToken'))],
      );
    },
    async expireLease(workId: string) {
      await sql(`UPDATE work_items SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [
        workId,
      ]);
    },
    /** Everything Memory left behind: rows, intents and objects under memory_stores/. */
    async memoryState() {
      const [row] = await sql<{ memories: number; versions: number; cleanups: number }>(
        `SELECT (SELECT count(*)::int FROM memories) AS memories,
                (SELECT count(*)::int FROM memory_versions) AS versions,
                (SELECT count(*)::int FROM object_cleanups) AS cleanups`,
      );
      const objects = (await files.objectKeys()).filter((k) => k.includes('/memory_stores/'));
      return { ...row!, objects: objects.length };
    },
  };
}
