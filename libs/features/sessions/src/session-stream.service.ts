import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { SESSION_EVENTS_CHANNEL } from './session-log';

type Listener = () => void;

/**
 * One LISTEN connection per API process for `mango_session_events` (payload `<session id>:<seq>`). It
 * only says "look now": each open stream then reads the rows after the last sequence it delivered, so a
 * lost notification delays an event but never loses or duplicates it.
 */
@Injectable()
export class SessionStreamHub implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private client?: Client;
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Open streams end on shutdown, so that closing the HTTP server does not wait for them. */
  private readonly closers = new Set<() => void>();
  private closing = false;

  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: (this.dataSource.options as { url?: string }).url,
      application_name: 'mango-session-streams',
    });
    client.on('notification', (msg) => {
      if (msg.channel !== SESSION_EVENTS_CHANNEL || !msg.payload) return;
      const sessionId = msg.payload.slice(0, msg.payload.indexOf(':'));
      for (const l of this.listeners.get(sessionId) ?? []) l();
    });
    const lost = () => {
      if (this.closing || this.client !== client) return;
      this.client = undefined;
      for (const set of this.listeners.values()) for (const l of set) l(); // re-read from the table
      const retry = (delay: number) =>
        setTimeout(() => void this.connect().catch(() => retry(Math.min(delay * 2, 5000))), delay).unref();
      retry(100);
    };
    client.on('error', lost);
    client.on('end', lost);
    await client.connect();
    await client.query(`LISTEN ${SESSION_EVENTS_CHANNEL}`);
    this.client = client;
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
    this.closing = true;
    for (const set of this.listeners.values()) for (const l of set) l();
    await this.client?.end().catch(() => undefined);
  }
}
