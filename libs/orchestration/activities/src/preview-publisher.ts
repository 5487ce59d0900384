import type { SessionLog } from '@mango/persistence';

/** Previews are batched: at most one notice per text block this often. */
const DELTA_FLUSH_MS = 50;

/**
 * Relays text deltas of the reply being generated as previews of the agent.message that will carry
 * `eventId`, batched per block, and the start of its thinking as a preview of its agent.thinking event. Best effort: previews are never persisted and a lost one is not resent.
 */
export function previewPublisher(log: SessionLog, sessionId: string, eventId: string) {
  const pending = new Map<number, string>();
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();
  let thinkingStarted = false;
  const flush = () => {
    timer = undefined;
    const batch = [...pending.entries()];
    pending.clear();
    chain = chain.then(async () => {
      for (const [index, text] of batch)
        await log.publishDelta({ sessionId, eventId, index, text }).catch(() => undefined);
    });
  };
  return {
    onText(index: number, text: string) {
      pending.set(index, (pending.get(index) ?? '') + text);
      timer ??= setTimeout(flush, DELTA_FLUSH_MS);
    },
    /** Announces the reply's agent.thinking event (`thinkingId`) once, when its first thinking block starts. */
    onThinking(thinkingId: string) {
      if (thinkingStarted) return;
      thinkingStarted = true;
      chain = chain.then(() =>
        log
          .publishDelta({ sessionId, eventId: thinkingId, index: 0, text: '', eventType: 'agent.thinking' })
          .catch(() => undefined),
      );
    },
    /** Sends what is buffered; resolves when every preview was published (before the event is appended). */
    async close(): Promise<void> {
      if (timer) clearTimeout(timer);
      flush();
      await chain;
    },
  };
}
