import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { transformFileSync, type Options } from '@swc/core';

export const ITEM_ENTRY = 'apps/supervisor/src/item-main.ts';
const REQUIRE = /require\("(\.{1,2}\/[^"]*)"\)/g;
/** The runner's one-file bundle, its V8 code cache and the loader that runs them (next to the file tree). */
export const BUNDLE = 'item-runner.bundle.js';
export const CODE_CACHE = 'item-runner.bundle.cache';
export const LOADER = 'item-runner.js';
/** Packages with native addons: required from node_modules at run time, never bundled. */
const NATIVE_PACKAGES = ['koffi', '@lydell/node-pty'];
/** How long a supervisor waits for another one building the same runner before it builds it itself. */
const BUILD_LOCK_MS = 120_000;
/**
 * Other builds under dist/item-runner unused for this long are removed when a supervisor starts (each is
 * several MiB; a source tree that changes often piles them up). A build in use is touched at every start,
 * so a supervisor still running older sources keeps its own for a day after its last start.
 */
export const STALE_RUNNER_MS = 24 * 3600_000;
const BUILD_DIR = /^[0-9a-f]{16}$/;

/**
 * The loader a container runs (`node <dir>/item-runner.js`): compiles the bundle with its V8 code cache
 * (made for this very bundle and Node at build time; V8 rejects a cache of another Node or V8 flags and
 * compiles from source instead), then runs it as a CommonJS module of this directory. Given
 * `--write-code-cache=<file>` and `--code-cache-as=<path in the container>` (the build step only), it
 * writes the cache as the process exits.
 */
const LOADER_SOURCE = `'use strict';
// The Mango item runner's loader, written by apps/supervisor/src/compile-runner.ts. Do not edit.
const { readFileSync, writeFileSync } = require('node:fs');
const { createRequire, wrap } = require('node:module');
const { join } = require('node:path');
const { Script } = require('node:vm');
const file = join(__dirname, '${BUNDLE}');
let cachedData;
try {
  cachedData = readFileSync(join(__dirname, '${CODE_CACHE}'));
} catch {}
const arg = (name) => (process.argv.find((a) => a.startsWith(name)) || '').slice(name.length);
// Building the cache: compiled under the name the bundle has where containers run it (a cached script
// keeps the name it was compiled under, for stack traces), and written as the process exits.
const out = arg('--write-code-cache=');
const filename = (out && arg('--code-cache-as=')) || file;
const script = new Script(wrap(readFileSync(file, 'utf8')), { filename, cachedData: out ? undefined : cachedData });
if (out) process.on('exit', () => writeFileSync(out, script.createCachedData()));
const m = { exports: {} };
script.runInThisContext().call(m.exports, m.exports, createRequire(file), m, file, __dirname);
`;

export interface CompiledRunner {
  /** The entry containers run with \`node\`, relative to the source root. */
  entry: string;
  /** Why the runner is not one bundle (the file tree is used then), if it is not. */
  notBundled?: string;
  /** The build's directory (dist/item-runner/<hash>, absolute), to keep marked as used. */
  dir: string;
}

/**
 * Development mode (MANGO_WORKER_SOURCE_DIR) and the worker image build: transpiles the item runner's
 * import graph from the source tree to plain JavaScript, then bundles it and its dependencies (webpack, a
 * dependency of @temporalio/worker already) into one file with a V8 code cache, so each Work container
 * starts Node on one file it need not parse or compile (docs/operator-guide.md "Item runner start-up").
 * Output goes to \`dist/item-runner/<content hash>\` inside the source tree (visible to containers through
 * the same read-only mount), keyed by the transpiled sources, the lock file and Node's version, so a
 * supervisor start reuses an earlier build. Concurrent builders: one builds, the others wait for its
 * directory (temporary directories and a rename otherwise). A failed bundle leaves the file tree, whose
 * entry is returned with the reason. Returns the entry's path relative to the source root.
 */
export async function compileItemRunner(sourceRoot: string): Promise<CompiledRunner> {
  const tsconfig = JSON.parse(readFileSync(join(sourceRoot, 'tsconfig.base.json'), 'utf8'));
  const options: Options = {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
      baseUrl: sourceRoot,
      paths: tsconfig.compilerOptions.paths,
    },
    module: { type: 'commonjs' },
    sourceMaps: false,
    swcrc: false,
    configFile: false,
  };
  const outputs = new Map<string, string>(); // relative .js path → code
  const queue = [join(sourceRoot, ITEM_ENTRY)];
  const done = new Set<string>();
  while (queue.length) {
    const file = queue.pop()!;
    if (done.has(file)) continue;
    done.add(file);
    const rel = relative(sourceRoot, file);
    if (file.endsWith('.json')) {
      outputs.set(rel, readFileSync(file, 'utf8'));
      continue;
    }
    const { code } = transformFileSync(file, options);
    outputs.set(rel.replace(/\.ts$/, '.js'), code);
    for (const [, spec] of code.matchAll(REQUIRE)) queue.push(resolveSource(dirname(file), spec!));
  }
  // Keyed by how it is built too (the loader, the bundler's settings), so a change there is rebuilt.
  const hash = createHash('sha256')
    .update(process.version)
    .update(LOADER_SOURCE)
    .update(String(bundleRunner));
  const lock = join(sourceRoot, 'package-lock.json');
  if (existsSync(lock)) hash.update(readFileSync(lock));
  for (const [rel, code] of [...outputs].sort(([a], [b]) => a.localeCompare(b)))
    hash.update(rel).update(code);
  const base = join(sourceRoot, 'dist/item-runner');
  const final = join(base, hash.digest('hex').slice(0, 16));
  const treeEntry = relative(sourceRoot, join(final, ITEM_ENTRY.replace(/\.ts$/, '.js')));
  // Readable by the sandbox uid whatever the caller's umask (modes set explicitly, not through umask).
  for (const dir of [join(sourceRoot, 'dist'), base]) {
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
  }
  const built = () => existsSync(final);
  if (!built()) await waitForOtherBuilder(`${final}.building`, built);
  let notBundled: string | undefined;
  if (!built()) {
    const tmp = join(base, `.tmp-${process.pid}-${Date.now()}`);
    const building = `${final}.building`;
    let owner = false;
    try {
      mkdirSync(building);
      owner = true;
    } catch {
      // another builder (or a stale lock it left): build anyway, the rename below settles the race
    }
    try {
      for (const [rel, code] of outputs) writeReadable(join(tmp, rel), code, tmp);
      const runAs = join('/opt/mango', relative(sourceRoot, final), BUNDLE);
      notBundled = await bundleRunner(tmp, ITEM_ENTRY.replace(/\.ts$/, '.js'), runAs).catch((err: unknown) =>
        String((err as Error)?.message ?? err),
      );
      if (notBundled) writeReadable(join(tmp, 'NOT-BUNDLED'), notBundled, tmp);
      try {
        renameSync(tmp, final);
      } catch (err) {
        if (!existsSync(final)) throw err; // another supervisor won the race with the same content
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
      if (owner) rmSync(building, { recursive: true, force: true });
    }
  }
  ensureSandboxReadable(sourceRoot);
  pruneStaleRunners(base, final);
  if (existsSync(join(final, LOADER)))
    return { entry: relative(sourceRoot, join(final, LOADER)), dir: final };
  const reason = join(final, 'NOT-BUNDLED');
  return {
    entry: treeEntry,
    dir: final,
    notBundled: notBundled ?? (existsSync(reason) ? readFileSync(reason, 'utf8') : 'no bundle was built'),
  };
}

/**
 * Marks `current` as used now and removes the other content-addressed builds in `base` not used for
 * STALE_RUNNER_MS (temporary and lock directories are left to their builders). Best effort: a build
 * another process removes first, or one it cannot remove, is skipped.
 */
export function pruneStaleRunners(base: string, current: string, now = Date.now()): void {
  markRunnerUsed(current, now);
  for (const name of readdirSync(base)) {
    const dir = join(base, name);
    if (!BUILD_DIR.test(name) || dir === current) continue;
    const used = statSync(dir, { throwIfNoEntry: false })?.mtimeMs;
    if (used !== undefined && now - used > STALE_RUNNER_MS)
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // removed by another supervisor, or not ours to remove
      }
  }
}

/**
 * Marks a runner build (its dist/item-runner/<hash> directory) as used now: a running supervisor does this
 * every hour, so another one's pruning never takes a build in use. Best effort.
 */
export function markRunnerUsed(dir: string, now = Date.now()): void {
  const t = new Date(now);
  try {
    utimesSync(dir, t, t);
  } catch {
    // gone or not ours to touch: its age then counts from its build
  }
}

/** Writes a file and any missing directories up to `top`, readable by everyone (0644 / 0755). */
function writeReadable(file: string, data: string | Buffer, top: string): void {
  for (let d = dirname(file); ; d = dirname(d)) {
    mkdirSync(d, { recursive: true });
    chmodSync(d, 0o755);
    if (d === top || d === dirname(d)) break;
  }
  writeFileSync(file, data);
  chmodSync(file, 0o644);
}

/** Waits while a fresh lock says another process is building the same runner, until `done` or stale. */
async function waitForOtherBuilder(building: string, done: () => boolean): Promise<void> {
  for (;;) {
    const since = statSync(building, { throwIfNoEntry: false })?.mtimeMs;
    if (since === undefined || Date.now() - since > BUILD_LOCK_MS || done()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Bundles the transpiled tree in \`dir\` from its entry into one CommonJS file (Node's own resolution:
 * the \`require\`/\`node\` conditions, \`main\`; no define of NODE_ENV, no minification), native packages
 * left to node_modules; then the loader, and the code cache made by loading the bundle once in a child
 * Node (it exits at its configuration check, every module loaded). Resolves to undefined when bundled, or
 * to why not: any webpack warning (a dynamic require it cannot follow) fails the bundle.
 */
async function bundleRunner(dir: string, entry: string, runAs: string): Promise<string | undefined> {
  // Loaded only when a runner is built (not at every supervisor start).
  const webpack = require('webpack') as typeof import('webpack');
  const stats = await new Promise<import('webpack').Stats | undefined>((done, fail) =>
    webpack(
      {
        mode: 'none',
        target: 'node',
        context: dir,
        entry: join(dir, entry),
        output: { path: dir, filename: BUNDLE, library: { type: 'commonjs2' } },
        externals: Object.fromEntries(NATIVE_PACKAGES.map((p) => [p, `commonjs ${p}`])),
        externalsPresets: { node: true },
        resolve: {
          conditionNames: ['require', 'node', 'default'],
          mainFields: ['main'],
          extensions: ['.js', '.json'],
        },
        node: { __dirname: false, __filename: false, global: false },
        optimization: { minimize: false, nodeEnv: false, splitChunks: false, runtimeChunk: false },
        devtool: false,
        performance: { hints: false },
        cache: false,
        infrastructureLogging: { level: 'error' },
      },
      (err, s) => (err ? fail(err) : done(s)),
    ),
  );
  const info = stats?.toJson({ all: false, errors: true, warnings: true });
  const problems = [...(info?.errors ?? []), ...(info?.warnings ?? [])];
  if (!stats || problems.length)
    return `webpack: ${problems.map((p) => `${p.moduleName ?? ''} ${p.message}`.trim()).join('; ') || 'no output'}`;
  chmodSync(join(dir, BUNDLE), 0o644);
  writeReadable(join(dir, LOADER), LOADER_SOURCE, dir);
  const cache = join(dir, CODE_CACHE);
  const run = spawnSync(
    process.execPath,
    [join(dir, LOADER), `--write-code-cache=${cache}`, `--code-cache-as=${runAs}`],
    {
      env: { PATH: '/usr/bin:/bin' },
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  // Without its environment the runner refuses to start, naming what is missing (exit 2): it loaded.
  if (run.status !== 2 || !/MANGO_WORK_ID/.test(run.stderr ?? '') || !existsSync(cache)) {
    rmSync(join(dir, LOADER), { force: true });
    return `the bundle did not load: exit ${run.status}, ${(run.stderr ?? '').slice(0, 500)}`;
  }
  chmodSync(cache, 0o644);
  return undefined;
}

/**
 * The mounted tree must be readable by the sandbox uid whatever umask it was cloned and installed with
 * (a `umask 077` clone is all 0700/0600): the source root is made traversable and node_modules — where the
 * runner's dependencies resolve — readable (a+rX). Only missing bits are added; a tree whose first level
 * already has them is left alone (one readdir).
 */
export function ensureSandboxReadable(sourceRoot: string): void {
  addBits(sourceRoot, 0o001);
  const modules = join(sourceRoot, 'node_modules');
  if (existsSync(modules) && needsWalk(modules)) walk(modules);
}

function addBits(p: string, bits: number): void {
  const mode = statSync(p).mode & 0o7777;
  if ((mode & bits) !== bits) chmodSync(p, mode | bits);
}

function needsWalk(modules: string): boolean {
  if ((statSync(modules).mode & 0o005) !== 0o005) return true;
  return readdirSync(modules).some((n) => {
    const st = lstatSync(join(modules, n));
    return st.isDirectory() ? (st.mode & 0o005) !== 0o005 : st.isFile() && (st.mode & 0o004) === 0;
  });
}

function walk(p: string): void {
  const st = lstatSync(p);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    addBits(p, 0o005);
    for (const n of readdirSync(p)) walk(join(p, n));
  } else addBits(p, st.mode & 0o100 ? 0o005 : 0o004);
}

function resolveSource(from: string, spec: string): string {
  const p = resolve(from, spec);
  for (const candidate of [`${p}.ts`, join(p, 'index.ts'), p.endsWith('.json') ? p : `${p}.json`])
    if (existsSync(candidate)) return candidate;
  throw new Error(`cannot resolve ${spec} from ${from}`);
}
