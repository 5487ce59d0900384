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
