import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SDK_VERSION } from './core';

const root = join(__dirname, '../../../..');
const run = (cmd: string, args: string[], cwd: string): string =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('the npm package', () => {
  it('has the server version (root package.json) everywhere', () => {
    const server = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    const sdk = JSON.parse(readFileSync(join(__dirname, '../package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    expect(sdk.name).toBe('@mango/sdk');
    expect(sdk.version).toBe(server.version);
    expect(SDK_VERSION).toBe(server.version);
  });

  it('packs with `npm pack`, installs from the tarball and imports with its types', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mango-sdk-pack-'));
    try {
      const tarball = run(
        'bash',
        [join(root, 'tools/sdk/pack-typescript.sh'), join(dir, 'out')],
        root,
      ).trim();
      const app = join(dir, 'app');
      run('mkdir', ['-p', app], dir);
      writeFileSync(
        join(app, 'package.json'),
        JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }),
      );
      run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', tarball], app);
      const out = run(
        'node',
        [
          '-e',
          `const { MangoClient, NotFoundError } = require('@mango/sdk');
           const c = new MangoClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
           console.log([typeof c.files.upload, typeof c.environments.work.poll, typeof c.sessions.threads.list,
             typeof NotFoundError].join(','));`,
        ],
        app,
      );
      expect(out.trim()).toBe('function,function,function,function');
      // The declarations ship too: a consumer type-checks against them.
      writeFileSync(
        join(app, 'main.ts'),
        `import { MangoClient, type OpenAPIComponents } from '@mango/sdk';
         type MangoFile = OpenAPIComponents['schemas']['File'];
         const c = new MangoClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
         export async function f(): Promise<MangoFile> { return c.files.upload({ file: new Uint8Array([1]) }); }
         // @ts-expect-error unknown resource
         c.nope;`,
      );
      writeFileSync(
        join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            module: 'commonjs',
            target: 'ES2022',
            lib: ['ES2023'],
            types: ['node'],
            typeRoots: [join(root, 'node_modules/@types')],
            skipLibCheck: false,
          },
          files: ['main.ts'],
        }),
      );
      run('node', [join(root, 'node_modules/typescript/bin/tsc'), '-p', app], app);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
