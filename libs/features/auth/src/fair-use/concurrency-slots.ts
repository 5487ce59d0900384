/**
 * Counts of things held at once (open event streams) per key, in this process's memory. `acquire` takes
 * a slot under every key named, all or none, and answers the release (idempotent) or the first key that
 * is full.
 */
export type AcquireResult<K extends string> = { ok: true; release: () => void } | { ok: false; full: K };

export class ConcurrencySlots {
  private readonly held = new Map<string, number>();

  acquire<K extends string>(keys: ReadonlyArray<{ key: string; limit: number; kind: K }>): AcquireResult<K> {
    for (const { key, limit, kind } of keys)
      if ((this.held.get(key) ?? 0) >= limit) return { ok: false, full: kind };
    for (const { key } of keys) this.held.set(key, (this.held.get(key) ?? 0) + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        for (const { key } of keys) {
          const n = (this.held.get(key) ?? 1) - 1;
          // Keys with nothing held are dropped, so the map holds only what is open now.
          if (n <= 0) this.held.delete(key);
          else this.held.set(key, n);
        }
      },
    };
  }

  /** Slots held under `key` now. */
  count(key: string): number {
    return this.held.get(key) ?? 0;
  }

  /** Keys with a slot held now. */
  get size(): number {
    return this.held.size;
  }
}
