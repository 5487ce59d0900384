import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { backupRefused } from './backup-error';
import { PgTool } from './pg-tools';

/** The largest dump part held in memory (a part is one archive member; tar needs its size up front). */
export const DUMP_PART_BYTES = 4 * 1024 * 1024;

/** The last bytes of a program's stderr (its error message; never our secrets: those go by environment). */
function stderrTail(child: { stderr: NodeJS.ReadableStream | null }): () => string {
  let tail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (s: string) => (tail = (tail + s).slice(-4000)));
  return () => tail.trim();
}

/**
 * `pg_dump --format=custom` of the database (one consistent snapshot: pg_dump reads in one repeatable-read
 * transaction), cut into parts of at most {@link DUMP_PART_BYTES} as they arrive. Connection settings go by
 * environment ({@link pgConnectionEnv}). Throws with pg_dump's message when it fails.
 */
export async function* dumpDatabase(
  pgDump: PgTool,
  connectionEnv: Record<string, string>,
  partBytes = DUMP_PART_BYTES,
): AsyncGenerator<Buffer> {
  const child = spawn(pgDump.path, ['--format=custom', '--no-password', '--lock-wait-timeout=60000'], {
    env: { ...process.env, ...connectionEnv, PGCONNECT_TIMEOUT: '10' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const errors = stderrTail(child);
  const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  exited.catch(() => undefined);
  try {
    let part: Buffer[] = [];
    let size = 0;
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      let rest = chunk;
      while (rest.length) {
        const take = rest.subarray(0, partBytes - size);
        part.push(take);
        size += take.length;
        rest = rest.subarray(take.length);
        if (size === partBytes) {
          yield Buffer.concat(part);
          part = [];
          size = 0;
        }
      }
    }
    const [code, signal] = await exited;
    if (code !== 0)
      throw backupRefused(`pg_dump failed (${signal ?? `exit ${code}`}): ${errors() || 'no message'}`);
    if (size) yield Buffer.concat(part);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }
}

/**
 * Feeds a custom-format dump to `pg_restore` (reading standard input) into the database of
 * `connectionEnv`, in one transaction that stops at the first error, owning every object as the
 * connecting role (`--no-owner --no-privileges`: the target's roles need not match the source's).
 * Returns a writable for the dump's bytes and a promise of pg_restore's end.
 */
export function restoreDatabase(
  pgRestore: PgTool,
  connectionEnv: Record<string, string>,
): { input: Writable; done: Promise<void> } {
  const child = spawn(
    pgRestore.path,
    [
      '--no-owner',
      '--no-privileges',
      '--exit-on-error',
      '--single-transaction',
      '--no-password',
      `--dbname=${connectionEnv.PGDATABASE ?? connectionEnv.PGUSER ?? 'postgres'}`,
    ],
    { env: { ...process.env, ...connectionEnv, PGCONNECT_TIMEOUT: '10' }, stdio: ['pipe', 'ignore', 'pipe'] },
  );
  const errors = stderrTail(child);
  const done = (once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>).then(
    ([code, signal]) => {
      if (code !== 0)
        throw backupRefused(`pg_restore failed (${signal ?? `exit ${code}`}): ${errors() || 'no message'}`);
    },
  );
  done.catch(() => undefined);
  // pg_restore may exit (an error) before it read everything: EPIPE is reported through `done`.
  child.stdin.on('error', () => undefined);
  return { input: child.stdin, done };
}
