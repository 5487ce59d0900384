import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { isBuiltin } from 'node:module';
import { dirname, join, relative } from 'node:path';
import {
  BUNDLE,
  CODE_CACHE,
  compileItemRunner,
  ensureSandboxReadable,
  ITEM_ENTRY,
  pruneStaleRunners,
  STALE_RUNNER_MS,
} from './compile-runner';

const ROOT = join(__dirname, '../../..');

describe('compileItemRunner', () => {
  it('bundles the runner graph into one file with a code cache, content-addressed and stable, that Node runs directly', async () => {
    const { entry, notBundled } = await compileItemRunner(ROOT);
    expect(notBundled).toBeUndefined();
    expect(entry).toMatch(/^dist\/item-runner\/[0-9a-f]{16}\/item-runner\.js$/);
    expect((await compileItemRunner(ROOT)).entry).toBe(entry);
    const dir = dirname(join(ROOT, entry));
    const bundle = readFileSync(join(dir, BUNDLE), 'utf8');
    expect(bundle).not.toMatch(/require\("@mango\//);
    // Dependencies are inside (no require of a package at run time) except the native ones.
    const required = [...bundle.matchAll(/\brequire\("([^".][^"]*)"\)/g)].map(([, p]) => p!);
    expect(required.filter((p) => !p.startsWith('node:') && !isBuiltin(p)).sort()).toEqual(
      expect.arrayContaining(['koffi']),
    );
    expect(required.filter((p) => ['undici', 'class-validator', 'pino', 'yaml'].includes(p))).toEqual([]);
    expect(statSync(join(dir, CODE_CACHE)).size).toBeGreaterThan(100_000);
    // Without its environment the runner refuses to start, naming what is missing (exit 2): it loaded.
    for (const file of [entry, relative(ROOT, join(dir, ITEM_ENTRY.replace(/\.ts$/, '.js')))]) {
      const run = spawnSync(process.execPath, [join(ROOT, file)], {
        env: { PATH: '/usr/bin:/bin' },
        encoding: 'utf8',
      });
      expect([file, run.status]).toEqual([file, 2]);
      expect(run.stderr).toMatch(/MANGO_WORK_ID/);
    }
  });

  it("removes other runner builds unused for a day, keeps the current one, recent ones and builders' work", () => {
    const base = mkdtempSync(join(tmpdir(), 'runner-prune-'));
    try {
      const now = Date.now();
      const old = new Date(now - STALE_RUNNER_MS - 60_000);
      const dirs = {
        current: 'aaaaaaaaaaaaaaaa',
        stale: 'bbbbbbbbbbbbbbbb',
        recent: 'cccccccccccccccc',
        tmp: '.tmp-1-2',
        lock: 'dddddddddddddddd.building',
      };
      for (const d of Object.values(dirs)) {
        mkdirSync(join(base, d, 'x'), { recursive: true });
        if (d !== dirs.recent) utimesSync(join(base, d), old, old);
      }
      pruneStaleRunners(base, join(base, dirs.current), now);
      expect(
        Object.values(dirs)
          .filter((d) => existsSync(join(base, d)))
          .sort(),
      ).toEqual([dirs.current, dirs.recent, dirs.tmp, dirs.lock].sort());
      // The current build counts as used now: a later start does not take it for stale.
      expect(now - statSync(join(base, dirs.current)).mtimeMs).toBeLessThan(1_000);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('writes the runner world-readable even under umask 077 (the sandbox uid must read it)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'runner-umask-'));
    for (const n of ['apps', 'libs', 'tools', 'node_modules', 'tsconfig.base.json'])
      symlinkSync(join(ROOT, n), join(root, n));
    const old = process.umask(0o077);
    try {
      const { entry } = await compileItemRunner(root);
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
