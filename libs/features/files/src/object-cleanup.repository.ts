import { Inject, Injectable } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { DataSource, EntityManager } from 'typeorm';

/** A held lease on one cleanup row: only the holder of `owner` may renew or finish it. */
export interface CleanupLease {
  id: string;
  owner: string;
}

export interface ClaimedCleanup {
  lease: CleanupLease;
  objectKey: string;
  reason: 'upload' | 'delete';
  /** A File, Skill version or Memory version row still names the key (never expected): the object must be kept. */
  inUse: boolean;
}

const interval = (param: string) => `make_interval(secs => ${param}::double precision / 1000)`;

/**
 * The `object_cleanups` table: leased intents to remove an object. Every lease decision uses
 * PostgreSQL's clock, so processes on different hosts agree. Each holder gets a fresh owner token, so
 * a sweeper that claims a row fences out its previous holder, even in the same process.
 */
@Injectable()
export class ObjectCleanupRepository {
  private readonly processTag = `${hostname()}:${process.pid}`;

  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  private newOwner(role: string): string {
    return `${this.processTag}:${role}:${randomBytes(6).toString('hex')}`;
  }

  /** Records the intent to (maybe) remove `objectKey`, leased to a new owner for `leaseMs`. */
  async register(
    em: EntityManager,
    input: { objectKey: string; reason: 'upload' | 'delete'; leaseMs: number },
  ): Promise<CleanupLease> {
    const lease = { id: randomUUID(), owner: this.newOwner(input.reason) };
    await em.query(
      `INSERT INTO object_cleanups (id, object_key, reason, lease_owner, lease_expires_at)
       VALUES ($1, $2, $3, $4, now() + ${interval('$5')})`,
      [lease.id, input.objectKey, input.reason, lease.owner, input.leaseMs],
    );
    return lease;
  }

  /** Extends the lease; false when it is no longer ours (a sweeper claimed it, or it is gone). */
  async renew(lease: CleanupLease, leaseMs: number): Promise<boolean> {
    const [row] = await this.dataSource.query(
      `WITH renewed AS (
         UPDATE object_cleanups SET lease_expires_at = now() + ${interval('$3')}
          WHERE id = $1 AND lease_owner = $2 RETURNING 1)
       SELECT count(*)::int AS n FROM renewed`,
      [lease.id, lease.owner, leaseMs],
    );
    return row.n === 1;
  }

  /** Deletes the row if we still hold it; false when someone else holds it or it is gone. */
  async release(lease: CleanupLease, em: EntityManager = this.dataSource.manager): Promise<boolean> {
    const [row] = await em.query(
      `WITH released AS (
         DELETE FROM object_cleanups WHERE id = $1 AND lease_owner = $2 RETURNING 1)
       SELECT count(*)::int AS n FROM released`,
      [lease.id, lease.owner],
    );
    return row.n === 1;
  }

  /**
   * Claims up to `limit` rows whose lease ran out more than `graceMs` ago: each gets a fresh owner
   * and a new lease of `leaseMs`, so a sweeper that dies mid-way is replaced by the next one.
   * Rows locked by another transaction (a committing upload, another sweeper) are skipped.
   */
  async claimExpired(input: { leaseMs: number; graceMs: number; limit: number }): Promise<ClaimedCleanup[]> {
    const owner = this.newOwner('sweep');
    const rows: Array<{ id: string; object_key: string; reason: 'upload' | 'delete'; in_use: boolean }> =
      await this.dataSource.query(
        `WITH due AS (
           SELECT id FROM object_cleanups
            WHERE lease_expires_at < now() - ${interval('$3')}
            ORDER BY lease_expires_at
            LIMIT $4
            FOR UPDATE SKIP LOCKED),
         claimed AS (
           UPDATE object_cleanups c
              SET lease_owner = $1, lease_expires_at = now() + ${interval('$2')}, attempts = c.attempts + 1
             FROM due WHERE c.id = due.id
           RETURNING c.id, c.object_key, c.reason)
         SELECT claimed.*, (EXISTS (SELECT 1 FROM files f WHERE f.object_key = claimed.object_key)
                 OR EXISTS (SELECT 1 FROM skill_versions v WHERE v.object_key = claimed.object_key)
                 OR EXISTS (SELECT 1 FROM memory_versions m WHERE m.object_key = claimed.object_key)) AS in_use
           FROM claimed`,
        [owner, input.leaseMs, input.graceMs, input.limit],
      );
    return rows.map((r) => ({
      lease: { id: r.id, owner },
      objectKey: r.object_key,
      reason: r.reason,
      inUse: r.in_use,
    }));
  }
}
