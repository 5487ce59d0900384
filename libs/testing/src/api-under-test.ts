import { Client } from 'pg';
import { ApiKeysService } from '@mango/feature-auth';
import { newId } from '@mango/platform-ids';
import { createDataSource } from '@mango/persistence';
import { answers, AppProcess, freePort, startApp } from './app-process';
import { createTestDatabase, TestDatabase } from './test-database';

/** A real apps/api process on its own database, plus direct SQL access for asserting what was stored. */
export interface ApiUnderTest {
  url: string;
  db: TestDatabase;
  app: AppProcess;
  sql<T = any>(text: string, params?: unknown[]): Promise<T[]>;
  issueKey(workspaceId: string, environmentId?: string): Promise<{ id: string; api_key: string }>;
  revokeKey(id: string): Promise<void>;
  createWorkspace(): Promise<string>;
  close(): Promise<void>;
}

export async function startApi(label: string, extraEnv: Record<string, string> = {}): Promise<ApiUnderTest> {
  const db = await createTestDatabase(label);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const app = await startApp(
    'apps/api/src/main.ts',
    {
      MANGO_DATABASE_URL: db.url,
      MANGO_API_PORT: String(port),
      MANGO_LOG_LEVEL: 'warn',
      MANGO_DB_POOL_SIZE: '5',
      ...extraEnv,
    },
    answers(`${url}/healthz`),
  );
  const ds = await createDataSource({ url: db.url, poolSize: 2 }).initialize();
  const keys = new ApiKeysService(ds);
  const sql = async <T>(text: string, params?: unknown[]): Promise<T[]> => {
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      return (await c.query(text, params)).rows as T[];
    } finally {
      await c.end();
    }
  };
  return {
    url,
    db,
    app,
    sql,
    issueKey: (workspaceId, environmentId) => keys.create({ workspaceId, environmentId, label: 'test' }),
    revokeKey: async (id) => void (await keys.revoke(id)),
    createWorkspace: async () => {
      const id = newId('workspace');
      await sql('INSERT INTO workspaces (id, name) VALUES ($1, $2)', [id, 'other']);
      return id;
    },
    close: async () => {
      await app.stop();
      await ds.destroy();
      await db.drop();
    },
  };
}
