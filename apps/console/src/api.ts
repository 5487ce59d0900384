import { MangoClient, MangoError } from '@mango/sdk';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

/**
 * The signed-in Workspace key lives in this tab's sessionStorage only (never localStorage, cookies or the
 * URL): closing the tab signs out. The console calls the API on its own origin, where it is served.
 */
const KEY = 'mango.console.api_key';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function storeKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
}

export function clientFor(apiKey: string): MangoClient {
  return new MangoClient({ baseUrl: window.location.origin, apiKey, maxRetries: 2 });
}

/**
 * An error for the page: the API's envelope (`error.type`, HTTP status, `error.message`, `request-id`)
 * when there is one, e.g. `not_found_error (404): no such Vault · request req_…`.
 */
export function messageOf(e: unknown): string {
  if (e instanceof MangoError) {
    const head = [e.type, e.status ? `(${e.status})` : ''].filter(Boolean).join(' ');
    return `${head ? `${head}: ` : ''}${e.message}${e.requestId ? ` · request ${e.requestId}` : ''}`;
  }
  return e instanceof Error ? e.message : String(e);
}

/** The signed-in client for every page. */
export const ClientContext = createContext<MangoClient | null>(null);

export function useClient(): MangoClient {
  const client = useContext(ClientContext);
  if (!client) throw new Error('not signed in');
  return client;
}
