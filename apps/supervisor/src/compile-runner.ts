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
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { transformFileSync, type Options } from '@swc/core';

export const ITEM_ENTRY = 'apps/supervisor/src/item-main.ts';
const REQUIRE = /require\("(\.{1,2}\/[^"]*)"\)/g;

/**
 * Development mode (MANGO_WORKER_SOURCE_DIR): transpiles the item runner's import graph from the source
 * tree to plain JavaScript once, at supervisor start, so each Work container starts Node directly instead
 * of loading SWC and transpiling on every activation. Output goes to `dist/item-runner/<content hash>`
 * inside the source tree (visible to containers through the same read-only mount); concurrent supervisors
 * write to temporary directories and rename. Returns the entry's path relative to the source root.
 */
export function compileItemRunner(sourceRoot: string): string {
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
  const hash = createHash('sha256');
  for (const [rel, code] of [...outputs].sort(([a], [b]) => a.localeCompare(b)))
    hash.update(rel).update(code);
  const base = join(sourceRoot, 'dist/item-runner');
  const final = join(base, hash.digest('hex').slice(0, 16));
  // Readable by the sandbox uid whatever the caller's umask (modes set explicitly, not through umask).
  for (const dir of [join(sourceRoot, 'dist'), base]) {
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755);
  }
  if (!existsSync(final)) {
    const tmp = join(base, `.tmp-${process.pid}-${Date.now()}`);
    for (const [rel, code] of outputs) {
      const file = join(tmp, rel);
      for (let d = dirname(file); ; d = dirname(d)) {
        mkdirSync(d, { recursive: true });
        chmodSync(d, 0o755);
        if (d === tmp) break;
      }
      writeFileSync(file, code);
      chmodSync(file, 0o644);
    }
    try {
      renameSync(tmp, final);
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      if (!existsSync(final)) throw err; // another supervisor won the race with the same content
    }
  }
  ensureSandboxReadable(sourceRoot);
  return relative(sourceRoot, join(final, ITEM_ENTRY.replace(/\.ts$/, '.js')));
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
