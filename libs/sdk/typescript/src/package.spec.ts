import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SDK_VERSION } from './core';

const root = join(__dirname, '../../../..');
const pkgDir = join(__dirname, '..');
const run = (cmd: string, args: string[], cwd: string): string =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('the npm package', () => {
  it('has the server version (root package.json) everywhere', () => {
    const server = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const sdk = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    expect(sdk.name).toBe('@mango/sdk');
    expect(sdk.version).toBe(server.version);
    expect(SDK_VERSION).toBe(server.version);
  });

  it('ships the root LICENSE unchanged', () => {
    expect(readFileSync(join(pkgDir, 'LICENSE'), 'utf8')).toBe(readFileSync(join(root, 'LICENSE'), 'utf8'));
  });

  // Plain `npm pack` in the package's folder (its `prepack` builds dist/), installed offline into an empty
  // project, then used through `require` and `import` and type-checked as CommonJS and as an ES module.
  it('packs completely with plain `npm pack` in its folder: CommonJS and ESM entries, types, README, LICENSE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mango-sdk-pack-'));
    try {
      const out = join(dir, 'out');
      mkdirSync(out);
      const packed = JSON.parse(
        run('npm', ['pack', '--json', '--pack-destination', out], pkgDir).replace(/^[^[]*/s, ''),
      ) as Array<{ filename: string; files: Array<{ path: string }> }>;
      const files = packed[0]!.files.map((f) => f.path).sort();
      expect(files).toEqual(
        expect.arrayContaining([
          'LICENSE',
          'README.md',
          'package.json',
          'dist/index.js',
          'dist/index.d.ts',
          'dist/index.mjs',
          'dist/index.d.mts',
          'dist/client.js',
          'dist/client.d.ts',
        ]),
      );
      // Only the build, the docs and the manifest: no sources, tests or build scripts.
      expect(
        files.filter((f) => !/^(dist\/.+\.(js|mjs|d\.ts|d\.mts)|LICENSE|README\.md|package\.json)$/.test(f)),
      ).toEqual([]);
      expect(files.filter((f) => /\.spec\.|\/testing\//.test(f))).toEqual([]);
      // prepack's dist/ is removed again by postpack: the source tree stays as it was.
      expect(readdirSync(pkgDir)).not.toContain('dist');
      const tarball = join(out, packed[0]!.filename);
      expect(packed[0]!.filename).toBe(`mango-sdk-${SDK_VERSION}.tgz`);

      const app = join(dir, 'app');
      mkdirSync(app);
      writeFileSync(
        join(app, 'package.json'),
        JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }),
      );
      run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', tarball], app);
      const probe = `[typeof c.files.upload, typeof c.environments.work.poll, typeof c.sessions.threads.list,
             typeof NotFoundError, SDK_VERSION].join(',')`;
      const cjs = run(
        'node',
        [
          '-e',
          `const { MangoClient, NotFoundError, SDK_VERSION } = require('@mango/sdk');
           const c = new MangoClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
           console.log(${probe});`,
        ],
        app,
      );
      expect(cjs.trim()).toBe(`function,function,function,function,${SDK_VERSION}`);
      const esm = run(
        'node',
        [
          '--input-type=module',
          '-e',
          `import { MangoClient, NotFoundError, SDK_VERSION } from '@mango/sdk';
           import { createRequire } from 'node:module';
           const c = new MangoClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
           // One implementation behind both entries: an error class is the same for import and require.
           const same = createRequire(import.meta.url)('@mango/sdk').NotFoundError === NotFoundError;
           console.log(${probe} + ',' + same);`,
        ],
        app,
      );
      expect(esm.trim()).toBe(`function,function,function,function,${SDK_VERSION},true`);

      // The declarations ship for both entries: consumers type-check against them under Node's resolution.
      const source = `import { MangoClient, type OpenAPIComponents } from '@mango/sdk';
         type MangoFile = OpenAPIComponents['schemas']['File'];
         const c = new MangoClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
         export async function f(): Promise<MangoFile> { return c.files.upload({ file: new Uint8Array([1]) }); }
         // @ts-expect-error unknown resource
         c.nope;`;
      writeFileSync(join(app, 'main.mts'), source);
      writeFileSync(join(app, 'main.cts'), source);
      writeFileSync(
        join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'ES2022',
            lib: ['ES2023'],
            types: ['node'],
            typeRoots: [join(root, 'node_modules/@types')],
            skipLibCheck: false,
          },
          files: ['main.mts', 'main.cts'],
        }),
      );
      run('node', [join(root, 'node_modules/typescript/bin/tsc'), '-p', app], app);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
