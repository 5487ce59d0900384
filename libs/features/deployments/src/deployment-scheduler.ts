import { Client, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';

/** The workflow each scheduled action starts (defined in @mango/workflows; named here to keep layers apart). */
export const DEPLOYMENT_RUN_WORKFLOW = 'deploymentRunWorkflow';

const SCHEDULE_PREFIX = 'deployment:';
export const scheduleIdOf = (deploymentId: string) => `${SCHEDULE_PREFIX}${deploymentId}`;

/** Memo key naming the task queue (one Mango installation) that owns a Schedule. */
const OWNER_MEMO = 'mango_task_queue';

/** A Schedule this installation created, as listed by Temporal (eventually consistent). */
export interface ManagedSchedule {
  deploymentId: string;
  paused: boolean;
}

export interface ScheduleSpecInput {
  deploymentId: string;
  expression: string;
  timezone: string;
  jitterMs: number;
  paused: boolean;
}

/**
 * A Deployment's cron on a **Temporal Schedule** (id `deployment:<id>`): Temporal owns the wall-clock
 * matching in the IANA zone (DST gaps skipped, repeated hours fire twice), the jitter and the upcoming
 * times; each action starts `deploymentRunWorkflow`, which records the run. Pausing pauses the Schedule;
 * unpausing does not backfill (a paused Schedule records no missed actions, and the catch-up window is one
 * minute for actions missed while Temporal itself was down).
 */
export class DeploymentScheduler {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
  ) {}

  async upsert(s: ScheduleSpecInput): Promise<void> {
    const spec = { cronExpressions: [s.expression], timezone: s.timezone, jitter: s.jitterMs };
    const action = {
      type: 'startWorkflow' as const,
      workflowType: DEPLOYMENT_RUN_WORKFLOW,
      args: [{ deploymentId: s.deploymentId }],
      taskQueue: this.taskQueue,
      workflowId: `deployment-run:${s.deploymentId}`,
    };
    const handle = this.client.schedule.getHandle(scheduleIdOf(s.deploymentId));
    try {
      await handle.update((prev) => ({ ...prev, spec, action, state: { ...prev.state, paused: s.paused } }));
    } catch (e) {
      if (!(e instanceof ScheduleNotFoundError)) throw e;
      await this.client.schedule.create({
        scheduleId: scheduleIdOf(s.deploymentId),
        spec,
        action,
        policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL, catchupWindow: '1 minute' },
        state: { paused: s.paused },
        memo: { [OWNER_MEMO]: this.taskQueue },
      });
    }
  }

  async setPaused(deploymentId: string, paused: boolean): Promise<void> {
    const handle = this.client.schedule.getHandle(scheduleIdOf(deploymentId));
    try {
      if (paused) await handle.pause('Mango: deployment paused');
      else await handle.unpause('Mango: deployment unpaused');
    } catch (e) {
      if (!(e instanceof ScheduleNotFoundError)) throw e;
    }
  }

  async remove(deploymentId: string): Promise<void> {
    try {
      await this.client.schedule.getHandle(scheduleIdOf(deploymentId)).delete();
    } catch (e) {
      if (!(e instanceof ScheduleNotFoundError)) throw e;
    }
  }

  /**
   * The Deployment Schedules this installation owns (memo `mango_task_queue` = our task queue), so
   * several installations, or test runs, may share one Temporal namespace without touching each
   * other's Schedules. Temporal's list is eventually consistent: callers act on PostgreSQL's state.
   */
  async *listManaged(): AsyncIterable<ManagedSchedule> {
    for await (const s of this.client.schedule.list()) {
      if (!s.scheduleId.startsWith(SCHEDULE_PREFIX)) continue;
      if (s.memo?.[OWNER_MEMO] !== this.taskQueue) continue;
      yield { deploymentId: s.scheduleId.slice(SCHEDULE_PREFIX.length), paused: s.state.paused };
    }
  }

  /** When the Deployment's Schedule was created, or null when there is none. */
  async createdAt(deploymentId: string): Promise<Date | null> {
    try {
      return (await this.client.schedule.getHandle(scheduleIdOf(deploymentId)).describe()).info.createdAt;
    } catch (e) {
      if (e instanceof ScheduleNotFoundError) return null;
      throw e;
    }
  }

  /** Up to 5 next action times (RFC 3339) from Temporal; none while paused or without a Schedule. */
  async upcoming(deploymentId: string): Promise<string[]> {
    try {
      const d = await this.client.schedule.getHandle(scheduleIdOf(deploymentId)).describe();
      if (d.state.paused) return [];
      return d.info.nextActionTimes.slice(0, 5).map((t) => t.toISOString());
    } catch (e) {
      if (e instanceof ScheduleNotFoundError) return [];
      throw e;
    }
  }
}
