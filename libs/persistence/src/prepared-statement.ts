import type { Pool } from 'pg';
import { DataSource, type EntityManager } from 'typeorm';

/** Where one statement runs: on its own (a DataSource), or inside the caller's transaction (an EntityManager). */
export type StatementTarget = DataSource | Pick<EntityManager, 'query'>;

/**
 * Runs one statement and returns its rows. On a DataSource it is a named prepared statement on a pooled
 * connection, in its own implicit transaction: PostgreSQL parses it once per connection and, once its
 * generic plan is as good as a custom one, stops planning it (for Poll's claim, planning cost about twice
 * the execution). On an EntityManager it runs as plain text inside that manager's transaction.
 *
 * `name` must always come with the same `text` (node-postgres refuses a name reused for another text), so
 * callers pass module constants. The text must not select `*`: a column added by a later migration would
 * change a prepared statement's result type, which PostgreSQL refuses until the connection is replaced.
 */
export async function runStatement<T = Record<string, unknown>>(
  target: StatementTarget,
  name: string,
  text: string,
  values: unknown[],
): Promise<T[]> {
  if (target instanceof DataSource) {
    const pool = (target.driver as unknown as { master: Pool }).master;
    return (await pool.query({ name, text, values })).rows as T[];
  }
  return target.query(text, values);
}
