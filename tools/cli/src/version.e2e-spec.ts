import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from './main';

// `--version` on the three entry points of the images: the release version (root package.json, stamped into
// tools/cli/package.json and checked by tools/release/version.js), on stdout, exit 0, nothing started.
const ROOT = join(__dirname, '../../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('--version', () => {
  it('mango --version and -V print the release version and exit 0 (main)', async () => {
    for (const flag of ['--version', '-V']) {
      let out = '';
      let err = '';
      const code = await main([flag], { out: (s) => (out += s), err: (s) => (err += s), env: {} });
      expect({ code, out, err }).toEqual({ code: 0, out: `${VERSION}\n`, err: '' });
    }
  });

  it.each([
    ['mango', ['--version']],
    ['mango-server', ['--version']],
    ['mango-worker', ['--version']],
    ['mango-worker', ['-V']],
  ])('%s %s prints the release version and exits 0 (the bin as a process)', (bin, args) => {
    const r = spawnSync('node', [join(ROOT, 'tools/cli/bin', `${bin}.js`), ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      // No database, no Temporal: --version must not need either.
      env: { PATH: process.env.PATH ?? '' },
    });
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
      status: 0,
      stdout: `${VERSION}\n`,
      stderr: '',
    });
  });
});
