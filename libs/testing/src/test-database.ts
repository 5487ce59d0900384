import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDataSource, migrate, MIGRATIONS } from '@mango/persistence';

/**
 * Each integration suite gets its own database, cloned from a template that was migrated once per
 * migration set. Needs MANGO_PG_ADMIN_URL (superuser) from `tools/ci/services.sh env`.
 */
export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export function adminUrl(): string {
  const url = process.env.MANGO_PG_ADMIN_URL;
  if (!url)
    throw new Error(
      'MANGO_PG_ADMIN_URL is not set: run the tests through `npm test` or eval "$(tools/ci/services.sh env)"',
    );
  return url;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const TEMPLATE_LOCK = 7_242_002;

async function ensureTemplate(): Promise<string> {
  const digest = createHash('sha256')
    .update(MIGRATIONS.map((m) => m.name + String(m.prototype.up)).join(','))
    .digest('hex')
    .slice(0, 12);
  const template = `mango_tpl_${digest}`;
  await admin(async (c) => {
    await c.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    try {
      const exists = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
      if (exists.rowCount) return;
      const building = `${template}_build`;
      await c.query(`DROP DATABASE IF EXISTS ${building}`);
      await c.query(`CREATE DATABASE ${building}`);
      const ds = createDataSource({ url: withDatabase(adminUrl(), building), poolSize: 2 });
      await ds.initialize();
      try {
        await migrate(ds);
      } finally {
        await ds.destroy();
      }
      await c.query(`ALTER DATABASE ${building} RENAME TO ${template}`);
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]);
    }
  });
  return template;
}

/** A fresh, migrated database for one test file. */
export async function createTestDatabase(label = 'test'): Promise<TestDatabase> {
  const template = await ensureTemplate();
  const name = `mango_${label.replace(/[^a-z0-9]/g, '').slice(0, 20)}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  return {
    name,
    url: withDatabase(adminUrl(), name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** An empty database (no migrations), for tests of the migration machinery itself. */
export async function createEmptyDatabase(label = 'empty'): Promise<TestDatabase> {
  const name = `mango_${label.replace(/[^a-z0-9]/g, '').slice(0, 20)}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  return {
    name,
    url: withDatabase(adminUrl(), name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
