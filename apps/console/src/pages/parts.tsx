import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Loaded, useWrite } from '../hooks';

/** The API's error envelope for a failed read (type, status, message, request id), as an alert. */
export function Failure({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p class="error" role="alert" data-testid="error">
      {error}
    </p>
  );
}

/**
 * A list page's body: the error envelope, "Loading…", the empty state, or the items. `items` are the
 * page's `data` (the console shows the first page of up to 100, newest first, as the API orders them).
 */
export function ListBody<T>({
  loaded,
  empty,
  children,
}: {
  loaded: Loaded<{ data: T[] } | undefined>;
  empty: string;
  children: (items: T[]) => ComponentChildren;
}) {
  if (loaded.error) return <Failure error={loaded.error} />;
  if (!loaded.data) return <p class="dim">Loading…</p>;
  if (loaded.data.data.length === 0)
    return (
      <p class="dim" data-testid="empty">
        {empty}
      </p>
    );
  return <>{children(loaded.data.data)}</>;
}

/** A card's toggled detail (credentials, deliveries, runs, memories): mounted — and loaded — when open. */
export function Toggle({ label, children }: { label: string; children: () => ComponentChildren }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" class="toggle" onClick={() => setOpen(!open)}>
        {open ? `Hide ${label.toLowerCase()}` : label}
      </button>
      {open && children()}
    </>
  );
}

export function metadataText(m: Record<string, string> | null | undefined): string {
  const entries = Object.entries(m ?? {});
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(', ') : '—';
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * One write call behind a button: asks first when `confirm` is set, is disabled while the call runs, shows
 * the API's error envelope if it fails, and calls `done` (e.g. the page's reload) when it succeeds.
 */
export function Action({
  label,
  run,
  done,
  confirm,
  testid,
}: {
  label: string;
  /** The write; `idempotencyKey` is the one to send (kept across the user's retries: useWrite). */
  run: (idempotencyKey: string) => Promise<unknown>;
  done?: (result: unknown) => void;
  confirm?: string;
  testid?: string;
}) {
  const { busy, error, run: write } = useWrite();
  const click = async () => {
    if (confirm && !window.confirm(confirm)) return;
    await write(async (idempotencyKey) => done?.(await run(idempotencyKey)));
  };
  return (
    <>
      <button type="button" class="action" data-testid={testid} disabled={busy} onClick={() => void click()}>
        {label}
      </button>
      <Failure error={error} />
    </>
  );
}
