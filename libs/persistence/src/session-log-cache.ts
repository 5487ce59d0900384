import type { SessionEventEntity } from './entities';

/** What a {@link SessionLogCache} keeps by default: 16 Mi characters of event bodies (as JSON). */
export const SESSION_LOG_CACHE_CHARS = 16 * 1024 * 1024;

/**
 * Session logs kept in memory between one process's model steps, so a step reads only the events
 * appended since the last one (not the whole log each time). Sound because an event is never changed
 * once appended and a read is a committed prefix of the log. Bounded by the size of the bodies kept: the
 * least recently read Sessions go first; a Session's log larger than the whole bound is not kept.
 */
export class SessionLogCache {
  private readonly logs = new Map<string, { events: SessionEventEntity[]; chars: number }>();
  private chars = 0;

  constructor(private readonly maxChars = SESSION_LOG_CACHE_CHARS) {}

  /** The log as last read (a prefix of the Session's log), or undefined. */
  get(sessionId: string): SessionEventEntity[] | undefined {
    const kept = this.logs.get(sessionId);
    if (!kept) return undefined;
    // Most recently read last: eviction takes from the front.
    this.logs.delete(sessionId);
    this.logs.set(sessionId, kept);
    return kept.events;
  }

  /** Keeps a read log; one no longer than the log already kept is ignored. */
  keep(sessionId: string, events: SessionEventEntity[]): void {
    const kept = this.logs.get(sessionId);
    if (kept && kept.events.length >= events.length) return;
    // Grown from the kept log (the same objects): only the new events are measured.
    const grows =
      kept !== undefined && kept.events.length > 0 && events[kept.events.length - 1] === kept.events.at(-1);
    let chars = grows ? kept.chars : 0;
    for (let i = grows ? kept.events.length : 0; i < events.length; i++)
      chars += JSON.stringify(events[i]!.body).length;
    this.drop(sessionId);
    if (chars > this.maxChars) return;
    this.logs.set(sessionId, { events, chars });
    this.chars += chars;
    for (const [id] of this.logs) {
      if (this.chars <= this.maxChars) break;
      this.drop(id);
    }
  }

  /** Lets a Session's log go (its turn stopped). */
  forget(sessionId: string): void {
    this.drop(sessionId);
  }

  private drop(sessionId: string): void {
    const kept = this.logs.get(sessionId);
    if (!kept) return;
    this.chars -= kept.chars;
    this.logs.delete(sessionId);
  }
}
