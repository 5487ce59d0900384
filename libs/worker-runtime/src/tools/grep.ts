import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Confinement } from './confine';
import { GREP_WORKER_SOURCE } from './grep-worker';
import { Tool, ToolError } from './types';
import { walk } from './walk';

const OUTPUT_BUDGET = 102_400;
const MAX_LINE = 2000;
const MAX_DEPTH = 40;
const MAX_CONCURRENT = 4;
export const GREP_TIMEOUT_MS = 60_000;

let running = 0;
const waiting: Array<() => void> = [];
async function slot(): Promise<() => void> {
  if (running >= MAX_CONCURRENT) await new Promise<void>((r) => waiting.push(r));
  running++;
  return () => {
    running--;
    waiting.shift()?.();
  };
}

/**
 * `grep` (§5.6, the JavaScript search: the base image ships no `rg`): a JS RegExp per line over a bounded
 * walk (depth ≤ 40, ≤ 50,000 entries, no symlinks, no `.git`/`node_modules`), lines over 2000 chars
 * skipped, a file stops at its first NUL, 102,400 chars of output, 60 s.
 */
export function grepTool(conf: Confinement, timeoutMs = GREP_TIMEOUT_MS): Tool {
  return {
    name: 'grep',
    async run(input, { signal }) {
      const pattern = input.pattern;
      if (typeof pattern !== 'string' || !pattern) throw new ToolError('grep: pattern is required');
      try {
        new RegExp(pattern);
      } catch (err) {
        throw new ToolError(`grep: invalid regex: ${(err as Error).message}`);
      }
      const base = typeof input.path === 'string' && input.path ? input.path : conf.workdir;
      const r = await conf.resolve('grep', base);
      const st = await stat(r.real).catch(() => undefined);
      if (!st) throw new ToolError(`grep: ${base}: no such file or directory`);
      const files = st.isFile()
        ? [{ real: r.real, shown: r.abs }]
        : (await walk(r.real, '**', { deep: MAX_DEPTH, signal }))
            .filter((e) => !e.symlink && e.stats.isFile())
            .map((e) => ({ real: join(r.real, e.path), shown: join(r.abs, e.path) }));
      const release = await slot();
      try {
        return await search(pattern, files, timeoutMs, signal);
      } finally {
        release();
      }
    },
  };
}

function search(
  pattern: string,
  files: Array<{ real: string; shown: string }>,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(GREP_WORKER_SOURCE, {
      eval: true,
      workerData: { pattern, files, maxLine: MAX_LINE },
    });
    let out = '';
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      void worker.terminate();
      fn();
    };
    const onAbort = () => finish(() => reject(new ToolError('grep: cancelled')));
    const timer = setTimeout(
      () =>
        finish(() =>
          out
            ? resolve(`${out}\n[the search was cut short after ${timeoutMs} ms]`)
            : reject(new ToolError(`grep: timed out after ${Math.round(timeoutMs / 1000)}s`)),
        ),
      timeoutMs,
    );
    signal.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (hits: string[] | null) => {
      if (hits === null) return finish(() => resolve(out || 'no matches'));
      for (const hit of hits) {
        const next = out ? `${out}\n${hit}` : hit;
        if (next.length > OUTPUT_BUDGET) {
          return finish(() =>
            resolve(`${next.slice(0, OUTPUT_BUDGET)}\n[output truncated at ${OUTPUT_BUDGET} bytes]`),
          );
        }
        out = next;
      }
    });
    worker.on('error', (err) => finish(() => reject(new ToolError(`grep: ${err.message}`))));
    worker.on('exit', () => finish(() => resolve(out || 'no matches')));
  });
}
