import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createProjectGraphAsync } from '@nx/devkit';

const ROOT = join(__dirname, '../..');
const FIXTURES = 'tools/lint/fixtures/src';
const FILES = [
  'cycle-a.ts',
  'cycle-b.ts',
  'imports-testing.ts',
  'floating-promise.ts',
  'sql-outside-persistence.ts',
  'clean.ts',
];

interface Finding {
  ruleId: string | null;
  message: string;
}

/**
 * The repository's own ESLint config, run by the ESLint CLI on files that break a rule on purpose
 * (tools/lint/fixtures, a `type:feature` project the normal lint ignores). Each rule must fire on its
 * fixture, and a clean file in the same project must pass, so a rule that silently stops running fails
 * this test.
 */
describe('lint rules (eslint.config.mjs on fixtures)', () => {
  const found = new Map<string, Finding[]>();

  beforeAll(async () => {
    // @nx/enforce-module-boundaries reads the cached project graph; make sure it exists and is current.
    await createProjectGraphAsync({ exitOnError: false });
    const run = await promisify(execFile)(
      process.execPath,
      [
        'node_modules/eslint/bin/eslint.js',
        '--no-ignore',
        '--format',
        'json',
        ...FILES.map((f) => join(FIXTURES, f)),
      ],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
    ).catch((err: { stdout?: string; code?: number }) => {
      // Exit code 1 means "lint errors found"; anything else is a crash of the linter itself.
      if (err.code !== 1 || !err.stdout) throw err;
      return { stdout: err.stdout };
    });
    for (const r of JSON.parse(run.stdout) as Array<{
      filePath: string;
      messages: Array<Finding & { severity: number }>;
    }>)
      found.set(
        r.filePath.slice(r.filePath.lastIndexOf('/') + 1),
        r.messages.filter((m) => m.severity === 2).map((m) => ({ ruleId: m.ruleId, message: m.message })),
      );
  }, 300_000);

  const errors = async (file: string) => found.get(file);

  it('fails on an import cycle inside a project', async () => {
    expect(await errors('cycle-a.ts')).toEqual([expect.objectContaining({ ruleId: 'import-x/no-cycle' })]);
    expect(await errors('cycle-b.ts')).toEqual([expect.objectContaining({ ruleId: 'import-x/no-cycle' })]);
  }, 120_000);

  it('fails on a production import of libs/testing', async () => {
    const found = await errors('imports-testing.ts');
    expect(found?.[0]?.message).not.toContain('type:testing');
    expect(found).toEqual([
      expect.objectContaining({
        ruleId: '@nx/enforce-module-boundaries',
        message: expect.stringMatching(
          /^A project tagged with "type:feature" can only depend on libs tagged with/,
        ),
      }),
    ]);
  }, 120_000);

  it('fails on a floating promise', async () => {
    expect(await errors('floating-promise.ts')).toEqual([
      expect.objectContaining({ ruleId: '@typescript-eslint/no-floating-promises' }),
    ]);
  }, 120_000);

  it('refuses SQL and the DataSource in a new file outside libs/persistence', async () => {
    expect((await errors('sql-outside-persistence.ts'))?.map((f) => f.ruleId)).toEqual([
      'mango/no-sql-outside-persistence',
      'mango/no-sql-outside-persistence',
      'mango/no-sql-outside-persistence',
    ]);
  }, 120_000);

  it('the SQL allowlist only shrinks: every listed file exists and still has SQL or the DataSource', () => {
    const { files } = JSON.parse(readFileSync(join(__dirname, 'rules/sql-allowlist.json'), 'utf8')) as {
      files: string[];
    };
    const offends = /\.query\s*[(<]|createQueryBuilder|import\s[^;]*\bDataSource\b[^;]*from 'typeorm'/;
    const stale = files.filter(
      (f) => !existsSync(join(ROOT, f)) || !offends.test(readFileSync(join(ROOT, f), 'utf8')),
    );
    // A file that moved its SQL into libs/persistence leaves the list, so it cannot take SQL back.
    expect(stale).toEqual([]);
    expect(files.some((f) => f.startsWith('libs/persistence/'))).toBe(false);
    expect([...files].sort()).toEqual(files);
  });

  it('passes a clean file in the same project (awaited, voided, a shared domain import)', async () => {
    expect(await errors('clean.ts')).toEqual([]);
  }, 120_000);
});
