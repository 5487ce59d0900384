import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileItemRunner, ensureSandboxReadable } from './compile-runner';

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

  it('writes the runner world-readable even under umask 077 (the sandbox uid must read it)', () => {
    const root = mkdtempSync(join(tmpdir(), 'runner-umask-'));
    for (const n of ['apps', 'libs', 'tools', 'node_modules', 'tsconfig.base.json'])
      symlinkSync(join(ROOT, n), join(root, n));
    const old = process.umask(0o077);
    try {
      const entry = compileItemRunner(root);
      const modes: Array<[string, number]> = [];
      const walk = (p: string) => {
        const st = statSync(p);
        modes.push([p, st.mode & 0o777]);
        if (st.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
      };
      walk(join(root, 'dist'));
      expect(modes.length).toBeGreaterThan(10);
      for (const [p, mode] of modes)
        expect([p, mode]).toEqual([p, statSync(p).isDirectory() ? 0o755 : 0o644]);
      expect(statSync(join(root, entry)).mode & 0o004).toBe(0o004);
    } finally {
      process.umask(old);
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('makes a umask-077 checkout traversable and its node_modules readable by the sandbox uid', () => {
    const old = process.umask(0o077);
    const root = mkdtempSync(join(tmpdir(), 'runner-tree-'));
    try {
      mkdirSync(join(root, 'node_modules/pkg/lib'), { recursive: true });
      writeFileSync(join(root, 'node_modules/pkg/lib/index.js'), 'module.exports = 1;');
      writeFileSync(join(root, 'node_modules/pkg/cli.js'), '#!/usr/bin/env node', { mode: 0o700 });
      writeFileSync(join(root, 'secret.env'), 'KEY=1');
      const mode = (p: string) => statSync(join(root, p)).mode & 0o777;
      expect([mode('.'), mode('node_modules/pkg/lib/index.js')]).toEqual([0o700, 0o600]);
      ensureSandboxReadable(root);
      expect(mode('.')).toBe(0o701);
      expect(mode('node_modules')).toBe(0o705);
      expect(mode('node_modules/pkg/lib')).toBe(0o705);
      expect(mode('node_modules/pkg/lib/index.js')).toBe(0o604);
      expect(mode('node_modules/pkg/cli.js')).toBe(0o705);
      expect(mode('secret.env')).toBe(0o600); // nothing outside node_modules is opened up
    } finally {
      process.umask(old);
      rmSync(root, { recursive: true, force: true });
    }
  });
});
