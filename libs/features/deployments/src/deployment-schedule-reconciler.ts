import { DeploymentEntity } from '@mango/persistence';
import { DataSource } from 'typeorm';
import type { DeploymentScheduler } from './deployment-scheduler';

/** What one pass changed (for logs and tests). */
export interface ReconcileReport {
  created: string[];
  paused: string[];
  unpaused: string[];
  removed: string[];
}

/**
 * PostgreSQL is the source of truth for Deployments; Temporal Schedules follow it. The API mirrors each
 * change at once (inside its transaction), and this pass repairs whatever that fast path missed:
 * - an automatic pause written only to PostgreSQL (an Agent archived in another feature's transaction)
 *   pauses the Schedule;
 * - a Schedule that is missing (deleted behind Mango's back, or a lost write) is created again;
 * - an orphan Schedule (its Deployment's transaction rolled back after the Schedule was created, or the
 *   Deployment is archived or lost its cron) is deleted, but only once it is older than `orphanGraceMs`,
 *   so a Deployment whose creating transaction is still open is never touched.
 * Each repair re-reads the Deployment under `FOR UPDATE SKIP LOCKED`: a row an API request is changing
 * right now is left to that request, and a stale Temporal listing only causes redundant calls, never a
 * wrong state. ADR 0015.
 */
export class DeploymentScheduleReconciler {
  constructor(
    private readonly dataSource: DataSource,
    private readonly scheduler: DeploymentScheduler,
    private readonly orphanGraceMs: number,
    private readonly log?: { info(obj: object, msg: string): void },
  ) {}

  async reconcileOnce(now = new Date()): Promise<ReconcileReport> {
    const report: ReconcileReport = { created: [], paused: [], unpaused: [], removed: [] };
    const listed = new Map<string, boolean>();
    for await (const s of this.scheduler.listManaged()) listed.set(s.deploymentId, s.paused);
    const live: Array<{ id: string }> = await this.dataSource.query(
      `SELECT id FROM deployments WHERE schedule IS NOT NULL AND archived_at IS NULL`,
    );
    const liveIds = new Set(live.map((r) => r.id));
    for (const { id } of live) {
      const wantPaused = listed.get(id);
      await this.withRow(id, async (d) => {
        if (!d || !d.schedule || d.archivedAt) return; // changed since the scan: the next pass sees it
        const paused = d.status === 'paused';
        if (wantPaused === undefined) {
          await this.scheduler.upsert({
            deploymentId: d.id,
            expression: d.schedule.expression,
            timezone: d.schedule.timezone,
            jitterMs: d.schedule.jitter_ms,
            paused,
          });
          report.created.push(d.id);
        } else if (wantPaused !== paused) {
          await this.scheduler.setPaused(d.id, paused);
          (paused ? report.paused : report.unpaused).push(d.id);
        }
      });
    }
    for (const id of listed.keys()) {
      if (liveIds.has(id)) continue;
      const created = await this.scheduler.createdAt(id);
      if (!created || now.getTime() - created.getTime() < this.orphanGraceMs) continue;
      await this.withRow(id, async (d, locked) => {
        if (locked || (d && d.schedule && !d.archivedAt)) return;
        await this.scheduler.remove(id);
        report.removed.push(id);
      });
    }
    const changed = Object.values(report).some((ids) => ids.length > 0);
    if (changed) this.log?.info({ reconcile: report }, 'deployment schedules reconciled with PostgreSQL');
    return report;
  }

  /** Runs `fn` holding the Deployment's row lock; `locked` when another transaction holds it. */
  private async withRow(
    id: string,
    fn: (d: DeploymentEntity | null, locked: boolean) => Promise<void>,
  ): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      const rows: Array<{ id: string }> = await tx.query(
        `SELECT id FROM deployments WHERE id = $1 FOR UPDATE SKIP LOCKED`,
        [id],
      );
      if (!rows[0]) {
        const exists: unknown[] = await tx.query(`SELECT 1 FROM deployments WHERE id = $1`, [id]);
        return fn(null, exists.length > 0);
      }
      return fn(await tx.findOneByOrFail(DeploymentEntity, { id }), false);
    });
  }
}
