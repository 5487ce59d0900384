import fg from 'fast-glob';
import type { Stats } from 'node:fs';

export const WALK_CAP = 50_000;
export const SKIPPED_DIRS = ['**/.git/**', '**/node_modules/**'];

export interface WalkEntry {
  /** Relative to the walk root. */
  path: string;
  stats: Stats;
  symlink: boolean;
}

/**
 * A bounded directory walk (fast-glob): skips `.git` and `node_modules`, never follows symlinked
 * directories, stops after `cap` entries or when `signal` aborts.
 */
export async function walk(
  root: string,
  pattern: string,
  options: { cap?: number; deep?: number; signal?: AbortSignal } = {},
): Promise<WalkEntry[]> {
  const out: WalkEntry[] = [];
  const stream = fg.stream(pattern, {
    cwd: root,
    dot: true,
    onlyFiles: false,
    followSymbolicLinks: false,
    ignore: SKIPPED_DIRS,
    stats: true,
    objectMode: true,
    suppressErrors: true,
    deep: options.deep ?? Infinity,
  });
  const cap = options.cap ?? WALK_CAP;
  try {
    for await (const raw of stream) {
      const e = raw as unknown as { path: string; stats: Stats; dirent: { isSymbolicLink(): boolean } };
      out.push({ path: e.path, stats: e.stats, symlink: e.dirent.isSymbolicLink() });
      if (out.length >= cap || options.signal?.aborted) break;
    }
  } finally {
    (stream as unknown as { destroy(): void }).destroy();
  }
  return out;
}
