import { useEffect, useState } from 'preact/hooks';
import { messageOf } from './api';

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
  /** Runs one write call: busy while it runs, its failure kept in `error`; resolves true on success. */
  run(call: () => Promise<void>): Promise<boolean>;
}

/** The state of a write (a button or a form): one call at a time, its error shown beside it. */
export function useWrite(): Write {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (call: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await call();
      return true;
    } catch (e) {
      setError(messageOf(e));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

export interface Paged<T> {
  rows: T[] | undefined;
  error: string | null;
  /** 1-based number of the page shown. */
  page: number;
  hasNext: boolean;
  hasPrev: boolean;
  next(): void;
  prev(): void;
}

/**
 * A list read a page at a time through its `next_page` cursor (every list page of the console): `next()`
 * follows the cursor, `prev()` goes back to the page before (the cursors seen are kept), and a change of
 * `deps` (a filter) starts again at the first page. The page shown is refreshed every `everyMs`.
 */
export function usePaged<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ data: T[]; next_page?: string | null }>,
  deps: unknown[],
  everyMs?: number,
): Paged<T> {
  // The cursors seen, for the filters they were seen with: other filters start again at the first page.
  const key = JSON.stringify(deps.map((d) => (typeof d === 'object' ? null : d)));
  const [seen, setSeen] = useState<{ key: string; cursors: Array<string | undefined> }>({
    key,
    cursors: [undefined],
  });
  const cursors = seen.key === key ? seen.cursors : [undefined];
  const setCursors = (f: (c: Array<string | undefined>) => Array<string | undefined>) =>
    setSeen({ key, cursors: f(cursors) });
  const cursor = cursors[cursors.length - 1];
  const { data, error } = useLoad(() => fetchPage(cursor), [...deps, cursor], everyMs);
  const nextCursor = data?.next_page ?? null;
  return {
    rows: data?.data,
    error,
    page: cursors.length,
    hasNext: nextCursor !== null,
    hasPrev: cursors.length > 1,
    next: () => nextCursor !== null && setCursors((c) => [...c, nextCursor]),
    prev: () => setCursors((c) => (c.length > 1 ? c.slice(0, -1) : c)),
  };
}
