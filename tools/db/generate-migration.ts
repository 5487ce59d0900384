/**
 * Writes a new migration from the difference between the entities and a freshly migrated scratch
 * database: `node -r @swc-node/register tools/db/generate-migration.ts VerbNoun`.
 * Needs MANGO_PG_ADMIN_URL (a superuser connection) — `eval "$(tools/ci/services.sh env)"`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { createDataSource, migrate, schemaDrift } from '@mango/persistence';

async function main(): Promise<void> {
  const name = process.argv[2];
  if (!name || !/^[A-Z][A-Za-z0-9]+$/.test(name)) throw new Error('usage: generate-migration.ts VerbNoun');
  const admin = process.env.MANGO_PG_ADMIN_URL;
  if (!admin) throw new Error('MANGO_PG_ADMIN_URL is not set');
  const scratch = `mango_gen_${Date.now()}`;
  const client = new Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${scratch}`);
  const url = new URL(admin);
  url.pathname = `/${scratch}`;
  const ds = createDataSource({ url: url.toString() });
  try {
    await ds.initialize();
    await migrate(ds);
    const builder = await ds.driver.createSchemaBuilder().log();
    const up = builder.upQueries.map((q) => q.query);
    const down = builder.downQueries.map((q) => q.query).reverse();
    if (up.length === 0) {
      console.log('no schema changes');
      return;
    }
    const stamp = Date.now();
    const file = join(__dirname, '../../libs/persistence/src/migrations', `${stamp}-${name}.ts`);
    const q = (s: string) => `    await runner.query(${JSON.stringify(s)});`;
    writeFileSync(
      file,
      `import { MigrationInterface, QueryRunner } from 'typeorm';\n\nexport class ${name}${stamp} implements MigrationInterface {\n  name = '${name}${stamp}';\n\n  async up(runner: QueryRunner): Promise<void> {\n${up.map(q).join('\n')}\n  }\n\n  async down(runner: QueryRunner): Promise<void> {\n${down.map(q).join('\n')}\n  }\n}\n`,
    );
    registerMigration(`${name}${stamp}`, `${stamp}-${name}`);
    // Landed migrations are immutable: write them in their final (formatted) form.
    execFileSync(
      process.execPath,
      [
        require.resolve('prettier/bin/prettier.cjs'),
        '--write',
        file,
        join(__dirname, '../../libs/persistence/src/migrations/index.ts'),
      ],
      { stdio: 'ignore' },
    );
    console.log(`wrote ${file} and registered it in migrations/index.ts`);
    void schemaDrift;
  } finally {
    await ds.destroy().catch(() => undefined);
    await client.query(`DROP DATABASE IF EXISTS ${scratch}`);
    await client.end();
  }
}

/** Appends the new migration to the imported array in migrations/index.ts. */
function registerMigration(className: string, fileName: string): void {
  const index = join(__dirname, '../../libs/persistence/src/migrations/index.ts');
  let text = readFileSync(index, 'utf8');
  text = text.replace(
    /(import [^\n]+\n)(?![\s\S]*import )/,
    `$1import { ${className} } from './${fileName}';\n`,
  );
  text = text.replace(/\n\];\s*$/, `\n  ${className},\n];\n`);
  writeFileSync(index, text);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
