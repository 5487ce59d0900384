import type { DataSource } from 'typeorm';

export type DatabaseReadiness = 'ok' | 'unreachable' | 'read_only' | 'timeout';

/**
 * Bounded PostgreSQL readiness: the database must answer within `timeoutMs` and accept writes (not a
 * standby, not `default_transaction_read_only`). Recovers by itself when the database does.
 */
export async function checkDatabase(dataSource: DataSource, timeoutMs = 2000): Promise<DatabaseReadiness> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DatabaseReadiness>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const probe = (async (): Promise<DatabaseReadiness> => {
    try {
      const rows: Array<{ recovery: boolean; read_only: string }> = await dataSource.query(
        `SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS read_only`,
      );
      const row = rows[0];
      if (!row) return 'unreachable';
      return row.recovery || row.read_only === 'on' ? 'read_only' : 'ok';
    } catch {
      return 'unreachable';
    }
  })();
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
