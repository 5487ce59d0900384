import type { Pool, PoolClient } from 'pg';
import { DataSource, type EntityManager, type EntityTarget, type ObjectLiteral } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { requestTransactionManager } from './request-transaction';

/** Where one statement runs: on its own (a DataSource), or inside the caller's transaction (an EntityManager). */
export type StatementTarget = DataSource | Pick<EntityManager, 'query' | 'queryRunner'>;

/**
 * Runs one statement as a named prepared statement and returns its rows: PostgreSQL parses it once per
 * connection and, once its generic plan is as good as a custom one, stops planning it (for Poll's claim,
 * planning cost about twice the execution; for an append's statements, parsing and planning cost more
 * than executing). On a DataSource it runs on a pooled connection, in its own implicit transaction; on an
 * EntityManager of a transaction, on that transaction's connection (any other EntityManager runs it as
 * plain text).
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
    // Inside a request transaction (an Idempotency-Key request), the statement joins it.
    const joined = requestTransactionManager(target);
    if (joined) return runStatement(joined, name, text, values);
    const pool = (target.driver as unknown as { master: Pool }).master;
    return (await pool.query({ name, text, values })).rows as T[];
  }
  const client = await transactionClient(target);
  if (client) return (await client.query({ name, text, values })).rows as T[];
  return target.query(text, values);
}

/** The node-postgres connection of the transaction `em` runs in, or undefined when it runs in none. */
async function transactionClient(em: Pick<EntityManager, 'queryRunner'>): Promise<PoolClient | undefined> {
  const runner = em.queryRunner;
  if (!runner || runner.isReleased || !runner.isTransactionActive) return undefined;
  if (!(runner.connection.driver instanceof PostgresDriver)) return undefined;
  return (await runner.connect()) as PoolClient;
}

const selectLists = new Map<EntityTarget<ObjectLiteral>, string>();

/**
 * An entity's columns selected under its property names (`"workspace_id" AS "workspaceId"`, …), from its
 * TypeORM metadata: a raw or prepared statement that selects this list from the entity's table reads rows
 * that are the entity's plain properties (PostgreSQL's own types, as TypeORM reads them: jsonb parsed,
 * timestamps as Dates, bigint as strings) without going through the query builder on every call. For
 * entities without embedded columns or column transformers.
 */
export function entitySelectList(
  em: Pick<EntityManager, 'connection'>,
  target: EntityTarget<ObjectLiteral>,
): string {
  let list = selectLists.get(target);
  if (list === undefined) {
    const columns = em.connection.getMetadata(target).columns;
    if (columns.some((c) => c.embeddedMetadata || c.transformer))
      throw new Error('entitySelectList: embedded columns and transformers are not supported');
    list = columns.map((c) => `"${c.databaseName}" AS "${c.propertyName}"`).join(', ');
    selectLists.set(target, list);
  }
  return list;
}
