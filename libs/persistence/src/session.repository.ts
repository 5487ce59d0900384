import type { DataSource, EntityManager } from 'typeorm';
import type { SessionEntity } from './entities';
import {
  memoryMounts,
  type PromptInputs,
  type SkillPinRef,
  skillEntries,
  skillVersionRows,
} from './prompt-inputs';
import { sessionMemoryResources } from './session-memory-attachments';

/**
 * The first key of the two-key advisory lock a Workspace's turn starts take (an arbitrary constant; the
 * two-key space is apart from the one-key space the migration lock uses).
 */
const TURN_START_LOCK_CLASS = 0x6d_74_73; // "mts"

/**
 * The Session row's reads and locks that are not appends (ADR 0005 "Aggregates own their SQL"): the
 * sweeper's candidates and its row lock, and a model step's prompt inputs. Appends, the status projection
 * and the outbox stay with {@link SessionLog}. A plain class: Nest apps get it from `PersistenceModule`,
 * activities construct it with their DataSource.
 */
export class SessionRepository {
  constructor(private readonly dataSource?: DataSource) {}

  /**
   * Sessions whose status says a turn is under way (`running`, `rescheduling`), not deleted and not
   * updated for `graceSeconds`: the oldest-updated first, at most `limit`.
   */
  async staleRunningIds(graceSeconds: number, limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.ds().query(
      `SELECT id FROM sessions
        WHERE status IN ('running', 'rescheduling') AND deleted_at IS NULL
          AND updated_at < now() - make_interval(secs => $1)
        ORDER BY updated_at LIMIT $2`,
      [graceSeconds, limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Sessions of one Workspace with a turn under way (`running` or `rescheduling`, not deleted), counted
   * while holding the Workspace's turn-start lock (an advisory lock until `tx` ends), so that two turns
   * starting at once in one Workspace are counted one after the other (the running-Sessions limit,
   * docs/api-guide.md "Fair use"). Other Workspaces' turn starts do not wait for it.
   */
  async lockAndCountTurns(tx: EntityManager, workspaceId: string): Promise<number> {
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [TURN_START_LOCK_CLASS, workspaceId]);
    const [row]: Array<{ n: number }> = await tx.query(
      `SELECT count(*)::int AS n FROM sessions
        WHERE workspace_id = $1 AND status IN ('running', 'rescheduling') AND deleted_at IS NULL`,
      [workspaceId],
    );
    return Number(row!.n);
  }

  /** How many Sessions have a turn running now (not deleted): the `mango_session_turns_running` gauge. */
  async countRunning(): Promise<number> {
    const [row]: Array<{ n: number }> = await this.ds().query(
      `SELECT count(*)::int AS n FROM sessions WHERE status = 'running' AND deleted_at IS NULL`,
    );
    return Number(row!.n);
  }

  /**
   * Runs `fn` in a transaction holding the Session's row lock (FOR UPDATE SKIP LOCKED) while it is still
   * `running`/`rescheduling` and not deleted; answers undefined without calling `fn` when another
   * transaction holds the row (another sweeper, an append) or the Session moved on.
   */
  async withRunningLock<T>(sessionId: string, fn: (tx: EntityManager) => Promise<T>): Promise<T | undefined> {
    return this.ds().transaction(async (tx) => {
      const [row]: Array<{ id: string }> = await tx.query(
        `SELECT id FROM sessions WHERE id = $1 AND status IN ('running', 'rescheduling') AND deleted_at IS NULL
            FOR UPDATE SKIP LOCKED`,
        [sessionId],
      );
      if (!row) return undefined;
      return fn(tx);
    });
  }

  /**
   * The prompt inputs of a Session the caller has read: those frozen at create, without a query. A
   * Session created before `prompt_inputs` existed has none frozen; for it they are read as before (its
   * Agent snapshot's Skill pins against `skill_versions`, a deleted version left out, and its Memory
   * attachments), two queries in the caller's transaction.
   */
  async promptInputs(
    em: EntityManager,
    session: Pick<SessionEntity, 'id' | 'promptInputs' | 'agent'>,
  ): Promise<PromptInputs> {
    if (session.promptInputs) return session.promptInputs;
    const pins = ((session.agent as { skills?: SkillPinRef[] }).skills ?? []).map((p) => ({
      skill_id: p.skill_id,
      version: p.version,
    }));
    const skills = skillEntries(pins, await skillVersionRows(em, pins));
    const memory = (await sessionMemoryResources(em, [session.id])).get(session.id) ?? [];
    return { skills, memoryStores: memoryMounts(memory) };
  }

  private ds(): DataSource {
    if (!this.dataSource) throw new Error('this SessionRepository was built without a DataSource');
    return this.dataSource;
  }
}
