import { useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api';
import { RetryKey } from './retry-key';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  reload(): void;
}

/** Loads `fn()` on mount, when `deps` change, and every `everyMs` (a light refresh for list pages). */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[], everyMs?: number): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    fn().then(
      (d) => live && (setData(d), setError(null)),
      (e) => live && setError(messageOf(e)),
    );
    const timer = everyMs ? setTimeout(() => setTick((t) => t + 1), everyMs) : undefined;
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [...deps, tick]);
  return { data, error, reload: () => setTick((t) => t + 1) };
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export interface Write {
  busy: boolean;
  /** The API's error envelope of the last failed call, or null. */
  error: string | null;
  /**
   * Runs one write call: busy while it runs, its failure kept in `error`; resolves true on success. The
   * call gets the Idempotency-Key to send: the one of the previous attempt when that attempt's outcome was
   * unknown (a network error, a 5xx) and `request` (the call's parameters) is unchanged (retry-key.ts).
   */
  run(call: (idempotencyKey: string) => Promise<void>, request?: unknown): Promise<boolean>;
}

/** The state of a write (a button or a form): one call at a time, its error shown beside it. */
export function useWrite(): Write {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const key = useRef(new RetryKey());
  const run = async (call: (idempotencyKey: string) => Promise<void>, request?: unknown) => {
    setBusy(true);
    setError(null);
    try {
      await call(key.current.next(request));
      key.current.settle();
      return true;
    } catch (e) {
      key.current.settle(e);
      setError(messageOf(e));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}
