import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import {
  MessageDelta,
  parseSessionNotice,
  PgListener,
  SESSION_EVENTS_CHANNEL,
  SESSION_PREVIEWS_CHANNEL,
  SessionEventEntity,
} from '@mango/persistence';
import { MangoMetrics } from '@mango/platform-metrics';
import { DataSource, MoreThan } from 'typeorm';

/** One open stream: the last sequence it delivered, and how it receives the rows after it. */
export interface StreamSubscriber {
  last: bigint;
  /** Receives rows in sequence order, each exactly once; the hub advances `last`. */
  deliver(row: SessionEventEntity): void;
  /** The read failed or the process is shutting down: end the stream (the client resumes elsewhere). */
  end(): void;
  /** Streams that opted in to previews (`event_deltas[]`) receive them as they are published. */
  delta?(delta: MessageDelta): void;
}

interface SessionTail {
  subscribers: Set<StreamSubscriber>;
  reading?: Promise<void>;
  again: boolean;
}

const BATCH = 500;
/** Its name in `mango_background_loop_*`. */
const LOOP = 'session_stream_listener';

/**
 * One LISTEN connection per API process for `mango_session_events` (payload `<session id>:<seq>`) and
 * `mango_session_previews` (preview deltas), and
 * one reader per Session however many streams are open on it: a NOTIFY only says "look now"; the
 * Session's reader reads the rows after the lowest sequence any of its streams delivered, and hands each
 * stream the rows it has not seen. A lost notification delays an event but never loses or duplicates it.
 */
@Injectable()
export class SessionStreamHub implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly listener: PgListener;
  private readonly tails = new Map<string, SessionTail>();
  private readonly log = new Logger('sessions');

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(MangoMetrics) metrics: MangoMetrics,
  ) {
    metrics.backgroundLoop(LOOP, 'running');
    metrics.gauge(
      'mango_sse_streams_open',
      'Session and Thread event streams open on this API process.',
      [],
      async () => [{ value: [...this.tails.values()].reduce((n, t) => n + t.subscribers.size, 0) }],
    );
    this.listener = new PgListener({
      url: (dataSource.options as { url?: string }).url,
      // Events and previews on one connection: a message's previews arrive before its own notice.
      channel: [SESSION_EVENTS_CHANNEL, SESSION_PREVIEWS_CHANNEL],
      applicationName: 'mango-session-streams',
      onNotify: (payload) => {
        const notice = parseSessionNotice(payload);
        if (notice?.kind === 'event') this.wake(notice.sessionId);
        else if (notice?.kind === 'delta')
          for (const s of this.tails.get(notice.sessionId)?.subscribers ?? []) s.delta?.(notice);
      },
      // Re-read from the table at the loss (streams end at once if the database is gone too) and again
      // once LISTEN is back: rows committed between the two were never notified.
      onLost: () => {
        metrics.backgroundLoop(LOOP, 'failing');
        this.log.warn('session stream listener lost; reconnecting (open streams re-read the table)');
        this.wakeAll();
      },
      onReconnected: () => {
        metrics.backgroundLoop(LOOP, 'recovered');
        this.log.log('session stream listener reconnected');
        this.wakeAll();
      },
    });
  }

  async onModuleInit(): Promise<void> {
    await this.listener.start();
  }

  private wakeAll(): void {
    for (const sessionId of this.tails.keys()) this.wake(sessionId);
  }

  /** Adds a stream and starts delivering from its `last`; returns the unsubscribe function. */
  subscribe(sessionId: string, subscriber: StreamSubscriber): () => void {
    let tail = this.tails.get(sessionId);
    if (!tail) this.tails.set(sessionId, (tail = { subscribers: new Set(), again: false }));
    tail.subscribers.add(subscriber);
    this.wake(sessionId);
    return () => {
      tail!.subscribers.delete(subscriber);
      if (tail!.subscribers.size === 0 && this.tails.get(sessionId) === tail) this.tails.delete(sessionId);
    };
  }

  /** Single-flight per Session: a wake-up during a read schedules one more pass. */
  private wake(sessionId: string): void {
    const tail = this.tails.get(sessionId);
    if (!tail) return;
    if (tail.reading) {
      tail.again = true;
      return;
    }
    tail.reading = this.read(sessionId, tail)
      .catch(() => {
        for (const s of [...tail.subscribers]) s.end();
      })
      .finally(() => {
        tail.reading = undefined;
      });
  }

  private async read(sessionId: string, tail: SessionTail): Promise<void> {
    do {
      tail.again = false;
      for (;;) {
        if (tail.subscribers.size === 0) return;
        // Only the streams present when the read starts take its rows: one that joins during the read
        // may be behind its lower bound, so it waits for the next pass (its wake-up schedules one).
        const readers = [...tail.subscribers];
        let from = readers[0]!.last;
        for (const s of readers) if (s.last < from) from = s.last;
        const rows = await this.dataSource.manager.find(SessionEventEntity, {
          where: { sessionId, seq: MoreThan(from.toString()) },
          order: { seq: 'ASC' },
          take: BATCH,
        });
        for (const row of rows) {
          const seq = BigInt(row.seq);
          for (const s of readers) {
            if (seq <= s.last || !tail.subscribers.has(s)) continue;
            s.last = seq;
            s.deliver(row);
          }
        }
        if (rows.length < BATCH) break;
      }
    } while (tail.again);
  }

  /** Ends every open stream first (Nest calls this before the HTTP server closes). */
  beforeApplicationShutdown(): void {
    for (const tail of this.tails.values()) for (const s of [...tail.subscribers]) s.end();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.listener.close(); // stops reconnecting at once
  }
}
