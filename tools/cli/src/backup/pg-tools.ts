import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { backupRefused } from './backup-error';

const run = promisify(execFile);

/**
 * The libpq environment for a `postgres://` URL, so that `pg_dump`/`pg_restore` connect without the URL
 * (and its password) on their command line, where `ps` would show it. Query parameters become their
 * libpq variables (`sslmode` → PGSSLMODE, `host` → PGHOST for a unix socket directory, …).
 */
export function pgConnectionEnv(url: string): Record<string, string> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw backupRefused('MANGO_DATABASE_URL is not a valid postgres:// URL');
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw backupRefused('MANGO_DATABASE_URL must be a postgres:// URL');
  const env: Record<string, string> = {};
  if (u.hostname) env.PGHOST = decodeURIComponent(u.hostname.replace(/^\[|\]$/g, ''));
  if (u.port) env.PGPORT = u.port;
  if (u.username) env.PGUSER = decodeURIComponent(u.username);
  if (u.password) env.PGPASSWORD = decodeURIComponent(u.password);
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (database) env.PGDATABASE = database;
  const PARAMS: Record<string, string> = {
    host: 'PGHOST',
    port: 'PGPORT',
    user: 'PGUSER',
    password: 'PGPASSWORD',
    dbname: 'PGDATABASE',
    sslmode: 'PGSSLMODE',
    sslrootcert: 'PGSSLROOTCERT',
    sslcert: 'PGSSLCERT',
    sslkey: 'PGSSLKEY',
    application_name: 'PGAPPNAME',
  };
  for (const [name, value] of u.searchParams) if (PARAMS[name]) env[PARAMS[name]!] = value;
  return env;
}

/** The major version in `pg_dump --version` output ("pg_dump (PostgreSQL) 15.18 (Debian …)"), or null. */
export function pgToolMajor(versionOutput: string): number | null {
  const m = /\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?/.exec(versionOutput);
  return m ? Number(m[1]) : null;
}

/** Where to look for a PostgreSQL client program, in order: MANGO_PG_BIN_DIR, Debian's layout, PATH. */
export function pgToolCandidates(
  tool: 'pg_dump' | 'pg_restore',
  serverMajor: number,
  env: Record<string, string | undefined>,
): string[] {
  if (env.MANGO_PG_BIN_DIR?.trim()) return [join(env.MANGO_PG_BIN_DIR.trim(), tool)];
  const path = (env.PATH ?? '').split(delimiter).filter(Boolean);
  return [join(`/usr/lib/postgresql/${serverMajor}/bin`, tool), ...path.map((dir) => join(dir, tool))];
}

export interface PgTool {
  path: string;
  major: number;
}

/**
 * A `pg_dump` or `pg_restore` whose major version is at least `minMajor` (the server's for a dump: an older
 * pg_dump refuses a newer server; the dump's for a restore: an older pg_restore cannot read a newer
 * archive). Refuses with what to install when none is found.
 */
export async function findPgTool(
  tool: 'pg_dump' | 'pg_restore',
  minMajor: number,
  env: Record<string, string | undefined>,
  why: string,
): Promise<PgTool> {
  const seen: string[] = [];
  for (const path of pgToolCandidates(tool, minMajor, env)) {
    if (!existsSync(path)) continue;
    let out: string;
    try {
      out = (await run(path, ['--version'], { timeout: 10_000 })).stdout;
    } catch {
      seen.push(`${path} (does not run)`);
      continue;
    }
    const major = pgToolMajor(out);
    if (major !== null && major >= minMajor) return { path, major };
    seen.push(`${path} (PostgreSQL ${major ?? '?'})`);
  }
  throw backupRefused(
    `${tool} of PostgreSQL ${minMajor} or newer is needed (${why}) and was not found` +
      `${seen.length ? `; found only ${seen.join(', ')}` : ''}: install the PostgreSQL ${minMajor} client ` +
      `programs (Debian/Ubuntu: postgresql-client-${minMajor}) or set MANGO_PG_BIN_DIR to their bin directory`,
  );
}
