import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { PgListener } from '@mango/persistence';
import { DataSource } from 'typeorm';
import { SESSION_EVENTS_CHANNEL } from '@mango/persistence';

type Listener = () => void;

/**
 * One LISTEN connection per API process for `mango_session_events` (payload `<session id>:<seq>`). It
 * only says "look now": each open stream then reads the rows after the last sequence it delivered, so a
 * lost notification delays an event but never loses or duplicates it.
 */
@Injectable()
export class SessionStreamHub implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly listener: PgListener;
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Open streams end on shutdown, so that closing the HTTP server does not wait for them. */
  private readonly closers = new Set<() => void>();

  constructor(@Inject(DataSource) dataSource: DataSource) {
    this.listener = new PgListener({
      url: (dataSource.options as { url?: string }).url,
      channel: SESSION_EVENTS_CHANNEL,
      applicationName: 'mango-session-streams',
      onNotify: (payload) => {
        for (const l of this.listeners.get(payload.slice(0, payload.indexOf(':'))) ?? []) l();
      },
      onLost: () => this.wakeAll(), // re-read from the table
    });
  }

  async onModuleInit(): Promise<void> {
    await this.listener.start();
  }

  private wakeAll(): void {
    for (const set of this.listeners.values()) for (const l of set) l();
  }

  subscribe(sessionId: string, listener: Listener, onShutdown: () => void): () => void {
    let set = this.listeners.get(sessionId);
    if (!set) this.listeners.set(sessionId, (set = new Set()));
    set.add(listener);
    this.closers.add(onShutdown);
    return () => {
      set!.delete(listener);
      this.closers.delete(onShutdown);
      if (set!.size === 0) this.listeners.delete(sessionId);
    };
  }

  /** Ends every open stream first (Nest calls this before the HTTP server closes). */
  beforeApplicationShutdown(): void {
    for (const close of [...this.closers]) close();
  }

  async onApplicationShutdown(): Promise<void> {
    const closed = this.listener.close(); // stops reconnecting at once
    this.wakeAll();
    await closed;
  }
}
