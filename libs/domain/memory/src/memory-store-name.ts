/**
 * Mount naming: a Store is mounted at `/mnt/memory/<slug>`, the slug being the lower-cased name with
 * every run of characters other than ASCII letters and digits turned into one hyphen (docs/api-guide.md, Memory Stores).
 * A name with nothing usable falls back to the Store id.
 */
export const MEMORY_MOUNT_ROOT = '/mnt/memory';

export function memoryStoreSlug(name: string, fallback: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return slug.length > 0 ? slug : fallback;
}

/** The marker file written at the root of every mounted Store; never synchronized. */
export const MEMORY_MARKER_FILE = '.mango-memory-store';

/** The marker's exact content for a Store: a tampered or foreign marker refuses every upload. */
export const memoryMarkerContent = (memoryStoreId: string): string => `version 1\n${memoryStoreId}\n`;
