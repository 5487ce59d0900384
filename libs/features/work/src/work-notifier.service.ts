import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';

export const WORK_CHANNEL = 'mango_work';

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
  private client?: Client;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private closing = false;

  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const options = this.dataSource.options as { url?: string };
    const client = new Client({ connectionString: options.url, application_name: 'mango-work-listener' });
    client.on('notification', (msg) => {
      if (msg.channel === WORK_CHANNEL && msg.payload) this.wakeAll(msg.payload);
    });
    client.on('error', () => this.reconnect(client));
    client.on('end', () => this.reconnect(client));
    await client.connect();
    await client.query(`LISTEN ${WORK_CHANNEL}`);
    this.client = client;
  }

  private reconnect(failed: Client): void {
    if (this.closing || this.client !== failed) return;
    this.client = undefined;
    // Wake everyone: they re-check the table, then wait again on the new connection.
    for (const env of this.waiters.keys()) this.wakeAll(env);
    const retry = (delay: number) =>
      setTimeout(() => {
        if (this.closing) return;
        this.connect().catch(() => retry(Math.min(delay * 2, 5000)));
      }, delay).unref();
    retry(100);
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
    this.closing = true;
    for (const env of this.waiters.keys()) this.wakeAll(env);
    await this.client?.end().catch(() => undefined);
  }
}
