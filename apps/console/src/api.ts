import { MangoClient } from '@mango/sdk';
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

/** An error's message for the page (the API's envelope message when there is one). */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The signed-in client for every page. */
export const ClientContext = createContext<MangoClient | null>(null);

export function useClient(): MangoClient {
  const client = useContext(ClientContext);
  if (!client) throw new Error('not signed in');
  return client;
}
