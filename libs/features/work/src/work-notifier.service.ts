import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PgListener, WORK_CHANNEL } from '@mango/persistence';
import { MangoMetrics } from '@mango/platform-metrics';
import { DataSource } from 'typeorm';

export { WORK_CHANNEL };

/** Its name in `mango_background_loop_*`. */
const LOOP = 'work_listener';

interface Waiter {
  wake: () => void;
}

/**
 * One LISTEN connection per process: a NOTIFY on `mango_work` with an Environment id as payload wakes
 * every long poll waiting on that Environment. NOTIFY only says "look now"; the table is the truth, so
 * a lost notification costs latency, never correctness.
 */
@Injectable()
export class WorkNotifier implements OnModuleInit, OnApplicationShutdown {
  private readonly listener: PgListener;
  private readonly waiters = new Map<string, Set<Waiter>>();

  private readonly log = new Logger('work');

  constructor(@Inject(DataSource) dataSource: DataSource, @Inject(MangoMetrics) metrics: MangoMetrics) {
    metrics.backgroundLoop(LOOP, 'running');
    this.listener = new PgListener({
      url: (dataSource.options as { url?: string }).url,
      channel: WORK_CHANNEL,
      applicationName: 'mango-work-listener',
      onNotify: (environmentId) => this.wakeAll(environmentId),
      // Wake everyone: they re-check the table, then wait again on the new connection; and once more when
      // LISTEN is back, for Work created while it was down (its NOTIFY was never heard).
      onLost: () => {
        metrics.backgroundLoop(LOOP, 'failing');
        this.log.warn('work listener lost; reconnecting (long polls re-check the table)');
        this.wakeEveryone();
      },
      onReconnected: () => {
        metrics.backgroundLoop(LOOP, 'recovered');
        this.log.log('work listener reconnected');
        this.wakeEveryone();
      },
    });
  }

  async onModuleInit(): Promise<void> {
    await this.listener.start();
  }

  private wakeEveryone(): void {
    for (const env of this.waiters.keys()) this.wakeAll(env);
  }

  private wakeAll(environmentId: string): void {
    const set = this.waiters.get(environmentId);
    if (!set) return;
    for (const w of set) w.wake();
  }

  /**
   * Registers interest in an Environment before the caller checks the table, so that a NOTIFY that
   * arrives between the check and the wait is not missed. `wait(ms)` resolves on a wake-up or timeout.
   */
  subscribe(environmentId: string): { wait(ms: number): Promise<void>; close(): void } {
    let woken = false;
    let resolveWait: (() => void) | undefined;
    const waiter: Waiter = {
      wake: () => {
        woken = true;
        resolveWait?.();
      },
    };
    let set = this.waiters.get(environmentId);
    if (!set) this.waiters.set(environmentId, (set = new Set()));
    set.add(waiter);
    return {
      wait: (ms: number) =>
        new Promise<void>((resolve) => {
          if (woken || ms <= 0) {
            woken = false;
            return resolve();
          }
          const timer = setTimeout(done, ms);
          function done() {
            clearTimeout(timer);
            woken = false;
            resolveWait = undefined;
            resolve();
          }
          resolveWait = done;
        }),
      close: () => {
        set!.delete(waiter);
        if (set!.size === 0) this.waiters.delete(environmentId);
      },
    };
  }

  async onApplicationShutdown(): Promise<void> {
    const closed = this.listener.close(); // stops reconnecting at once
    this.wakeEveryone();
    await closed;
  }
}
