import { DataSource } from 'typeorm';

/**
 * What `mango restore` needs to know about its target database before it writes to it: the server's major
 * version (the `pg_dump`/`pg_restore` it needs) and whether the database holds anything at all.
 */
export interface DatabaseContents {
  /** e.g. 15 for PostgreSQL 15.18 (`server_version_num` / 10000). */
  serverMajor: number;
  /** Tables, views, sequences, indexes, types and functions outside the system schemas. */
  userObjects: number;
  /** Schemas other than `public` and the system ones. */
  extraSchemas: string[];
}

/** Reads only the catalogs: safe on any database, empty or not. */
export async function databaseContents(dataSource: DataSource): Promise<DatabaseContents> {
  const [row] = (await dataSource.query(
    `SELECT current_setting('server_version_num')::int AS version,
       (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'
           AND n.nspname NOT LIKE 'pg\\_temp%')
       + (SELECT count(*) FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
         WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'
           AND t.typtype IN ('e', 'd', 'r', 'm'))
       + (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')) AS objects,
       (SELECT coalesce(array_agg(nspname::text ORDER BY nspname), '{}'::text[]) FROM pg_namespace
         WHERE nspname NOT IN ('public', 'pg_catalog', 'information_schema') AND nspname NOT LIKE 'pg\\_%')
         AS schemas`,
  )) as Array<{ version: number; objects: string | number; schemas: string[] }>;
  return {
    serverMajor: Math.floor(Number(row!.version) / 10000),
    userObjects: Number(row!.objects),
    extraSchemas: row!.schemas,
  };
}
