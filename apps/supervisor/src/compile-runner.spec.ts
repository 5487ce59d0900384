import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileItemRunner } from './compile-runner';

const ROOT = join(__dirname, '../../..');

describe('compileItemRunner', () => {
  it('emits plain JavaScript for the runner graph, content-addressed and stable, that Node runs directly', () => {
    const entry = compileItemRunner(ROOT);
    expect(entry).toMatch(/^dist\/item-runner\/[0-9a-f]{16}\/apps\/supervisor\/src\/item-main\.js$/);
    expect(compileItemRunner(ROOT)).toBe(entry);
    const code = readFileSync(join(ROOT, entry), 'utf8');
    expect(code).not.toMatch(/require\("@mango\//);
    // Without its environment the runner refuses to start, naming what is missing (exit 2): it loaded.
    const run = spawnSync(process.execPath, [join(ROOT, entry)], {
      env: { PATH: '/usr/bin:/bin' },
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/MANGO_WORK_ID/);
  });
});
