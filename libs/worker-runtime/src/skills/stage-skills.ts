import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { mkdir, readdir, realpath, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { Parser, ReadEntry } from 'tar';
import { isRetryableStatus } from '@mango/sdk';
import { idPattern, SKILL_LIMITS, SKILL_NAME, unsafeSkillPath } from '@mango/domain-kernel';
import { backoffMs, sleep } from '../backoff';
import { RemoteSkillVersion, SkillsApi, SkillsApiError } from './skills-client';

/** One frozen pin of the Session: a Skill version, for the primary Agent or a roster Agent. */
export interface SkillPinRef {
  skill_id: string;
  version: string;
  /** A roster Agent's pin: staged below `skills/.agents/<agent_id>/` instead of `skills/`. */
  agent_id?: string;
}

export interface StagingLimits {
  pins: number;
  compressedBytes: number;
  expandedBytes: number;
  files: number;
}

/** The Session-wide Skill limits (docs/api-guide.md, Skills). */
export const SKILL_STAGING_LIMITS: StagingLimits = {
  pins: SKILL_LIMITS.sessionPins,
  compressedBytes: SKILL_LIMITS.sessionBytes,
  expandedBytes: SKILL_LIMITS.sessionBytes,
  files: SKILL_LIMITS.sessionFiles,
};

export interface StageSkillsOptions {
  /** The Skills routes, with the Work token. */
  client: SkillsApi;
  sessionId: string;
  /** The Session's frozen pins (numeric versions). */
  pins: readonly SkillPinRef[];
  /** The canonical workdir: the tree becomes `<root>/skills`. */
  root: string;
  signal?: AbortSignal;
  /** Attempts per request before a temporary failure is given up (default 5, docs/api-guide.md, Skills). */
  attempts?: number;
  limits?: Partial<StagingLimits>;
  /** Test hook: base delay of the retry backoff. */
  backoffBaseMs?: number;
}

export interface StagedSkill {
  skill_id: string;
  version: string;
  agent_id?: string;
  name: string;
  /** Relative to the workdir, e.g. `skills/pdf-tools`. */
  path: string;
  files: number;
  bytes: number;
}

/**
 * A permanent validation failure of the Session's immutable Skill input (a pin that no longer exists,
 * an archive whose length or digest differs from the frozen version, an unsafe or non-regular member,
 * a Session-wide limit): the runner reports it with Work Fail (the Session terminates).
 */
export class SkillStagingError extends Error {
  readonly permanent = true;
  constructor(message: string) {
    super(message);
    this.name = 'SkillStagingError';
  }
}

/**
 * A temporary retrieval failure (network, 5xx, 429, a cut-off download, a dead token) that persisted
 * through the retries: the runner neither Fails nor Stops, so the lease expires and the Work is reclaimed.
 */
export class SkillRetrievalError extends Error {
  readonly retryable = true;
  constructor(message: string) {
    super(message);
    this.name = 'SkillRetrievalError';
  }
}

const STAGING_PREFIX = '.skills-staging-';
const SKILLS_DIR = 'skills';
const AGENT_ID = idPattern('agent');
const SKILL_ID = idPattern('skill');
const VERSION = /^[1-9][0-9]{0,15}$/;
const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Skill staging (docs/api-guide.md, Skills). Resolves every pin's metadata with the Work token, checks the Session-wide
 * limits (500 unique pins, 500 MiB compressed and expanded, 10,000 files), downloads each archive into a
 * private staging directory below the workdir verifying its exact compressed length and SHA-256, then
 * extracts it accepting only regular files and directories at safe paths under the version's directory
 * (the limits are enforced again on the actual members). Only when everything verified does the fresh
 * tree replace `<root>/skills` (renames: the prior tree, or whatever a tool left there — a symlink
 * included — is moved aside unfollowed and removed). Permanent problems throw SkillStagingError, temporary
 * ones (after the retries) SkillRetrievalError; either way nothing of the new tree remains.
 */
export async function stageSkills(o: StageSkillsOptions): Promise<{ dir: string; skills: StagedSkill[] }> {
  const limits = { ...SKILL_STAGING_LIMITS, ...o.limits };
  const root = await realpath(o.root);
  const pins = uniquePins(o.pins);
  if (pins.length > limits.pins)
    throw new SkillStagingError(
      `the Session pins ${pins.length} Skill versions; at most ${limits.pins} can be staged`,
    );
  await removeLeftovers(root);
  const staging = await mkdtempIn(root);
  try {
    const metas: RemoteSkillVersion[] = [];
    for (const pin of pins)
      metas.push(
        checkMeta(
          pin,
          await withRetries(o, `metadata of ${label(pin)}`, (s) =>
            o.client.getVersion(pin.skill_id, pin.version, s),
          ),
        ),
      );
    const total = (f: (m: RemoteSkillVersion) => number) => metas.reduce((n, m) => n + f(m), 0);
    if (total((m) => m.archive_size_bytes) > limits.compressedBytes)
      throw new SkillStagingError(
        `the Session's Skills have more than ${limits.compressedBytes} compressed bytes`,
      );
    if (total((m) => m.expanded_size_bytes) > limits.expandedBytes)
      throw new SkillStagingError(
        `the Session's Skills have more than ${limits.expandedBytes} expanded bytes`,
      );
    if (total((m) => m.file_count) > limits.files)
      throw new SkillStagingError(`the Session's Skills have more than ${limits.files} files`);

    const tree = join(staging, 'tree');
    await mkdir(tree, { mode: 0o755 });
    const budget = { bytes: 0, files: 0, limits };
    const taken = new Set<string>();
    const staged: StagedSkill[] = [];
    for (const [i, pin] of pins.entries()) {
      const meta = metas[i]!;
      const rel = pin.agent_id ? join('.agents', pin.agent_id, meta.name) : meta.name;
      if (taken.has(rel))
        throw new SkillStagingError(`two pinned Skills are both named "${meta.name}" (${label(pin)})`);
      taken.add(rel);
      const archive = join(staging, `archive-${i}.tar.gz`);
      await withRetries(o, `archive of ${label(pin)}`, (s) => download(o.client, pin, meta, archive, s));
      const before = { ...budget };
      await extract(archive, meta, join(tree, rel), budget, pin);
      await rm(archive, { force: true });
      staged.push({
        skill_id: pin.skill_id,
        version: pin.version,
        ...(pin.agent_id ? { agent_id: pin.agent_id } : {}),
        name: meta.name,
        path: join(SKILLS_DIR, rel),
        files: budget.files - before.files,
        bytes: budget.bytes - before.bytes,
      });
    }
    o.signal?.throwIfAborted();
    const target = join(root, SKILLS_DIR);
    await rename(target, join(staging, 'previous')).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
    await rename(tree, target);
    return { dir: target, skills: staged };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Removes the staged tree (when the Work ends) and any staging leftovers of a crashed run. */
export async function removeStagedSkills(root: string): Promise<void> {
  const dir = await realpath(root);
  await rm(join(dir, SKILLS_DIR), { recursive: true, force: true });
  await removeLeftovers(dir);
}

const label = (p: SkillPinRef) =>
  `${p.skill_id} version ${p.version}${p.agent_id ? ` (agent ${p.agent_id})` : ''}`;

function uniquePins(pins: readonly SkillPinRef[]): SkillPinRef[] {
  const seen = new Map<string, SkillPinRef>();
  for (const p of pins) {
    if (!SKILL_ID.test(p.skill_id)) throw new SkillStagingError(`"${String(p.skill_id)}" is not a Skill id`);
    if (!VERSION.test(p.version))
      throw new SkillStagingError(`${p.skill_id} is pinned to "${p.version}", not a frozen version number`);
    if (p.agent_id !== undefined && !AGENT_ID.test(p.agent_id))
      throw new SkillStagingError(`"${String(p.agent_id)}" is not an Agent id`);
    seen.set(`${p.agent_id ?? ''}/${p.skill_id}/${p.version}`, p);
  }
  return [...seen.values()];
}

function checkMeta(pin: SkillPinRef, m: RemoteSkillVersion): RemoteSkillVersion {
  const ok =
    m.skill_id === pin.skill_id &&
    String(m.version) === pin.version &&
    typeof m.name === 'string' &&
    m.name.length <= 64 &&
    SKILL_NAME.test(m.name) &&
    typeof m.directory === 'string' &&
    unsafeSkillPath(`${m.directory}/x`) === null &&
    Number.isSafeInteger(m.archive_size_bytes) &&
    m.archive_size_bytes >= 0 &&
    typeof m.archive_sha256 === 'string' &&
    SHA256.test(m.archive_sha256) &&
    Number.isSafeInteger(m.expanded_size_bytes) &&
    Number.isSafeInteger(m.file_count);
  if (!ok) throw new SkillStagingError(`the metadata of ${label(pin)} is not a valid Skill version`);
  return m;
}

const isTemporary = (e: unknown) =>
  e instanceof SkillRetrievalError ||
  (e instanceof SkillsApiError && (e.status === 0 || isRetryableStatus(e.status)));

/** Retries temporary failures (`attempts` in all, jittered backoff); maps the outcome to the two errors. */
async function withRetries<T>(
  o: StageSkillsOptions,
  what: string,
  call: (signal?: AbortSignal) => Promise<T>,
): Promise<T> {
  const attempts = o.attempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    o.signal?.throwIfAborted();
    try {
      return await call(o.signal);
    } catch (err) {
      if (o.signal?.aborted) throw o.signal.reason;
      if (err instanceof SkillStagingError) throw err;
      if (err instanceof SkillsApiError && (err.status === 401 || err.status === 403))
        throw new SkillRetrievalError(`${what}: the Work token was refused (${err.status})`);
      if (err instanceof SkillsApiError && err.status === 404)
        throw new SkillStagingError(`${what}: not found (deleted, or not pinned by this Session)`);
      if (!isTemporary(err))
        throw new SkillStagingError(`${what}: ${err instanceof Error ? err.message : String(err)}`);
      if (attempt >= attempts)
        throw new SkillRetrievalError(
          `${what}: ${err instanceof Error ? err.message : String(err)} (after ${attempts} attempts)`,
        );
      await sleep(backoffMs(attempt - 1, { baseMs: o.backoffBaseMs ?? 250, maxMs: 8_000 }), o.signal);
    }
  }
}

/**
 * Downloads the archive to `file`, verifying it is exactly the frozen length and SHA-256: a longer
 * stream or a different digest is permanent; a stream that ends short or breaks is temporary.
 */
async function download(
  client: SkillsApi,
  pin: SkillPinRef,
  meta: RemoteSkillVersion,
  file: string,
  signal?: AbortSignal,
): Promise<void> {
  const body = await client.openContent(pin.skill_id, pin.version, signal);
  const hash = createHash('sha256');
  let n = 0;
  const verify = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      n += chunk.length;
      if (n > meta.archive_size_bytes)
        return cb(
          new SkillStagingError(
            `the archive of ${label(pin)} is longer than its ${meta.archive_size_bytes} bytes`,
          ),
        );
      hash.update(chunk);
      cb(null, chunk);
    },
  });
  try {
    await pipeline(body, verify, createWriteStream(file, { flags: 'w', mode: 0o600 }), { signal });
  } catch (err) {
    if (err instanceof SkillStagingError || signal?.aborted) throw err;
    throw new SkillRetrievalError(`downloading ${label(pin)} failed: ${(err as Error).message}`);
  }
  if (n < meta.archive_size_bytes)
    throw new SkillRetrievalError(
      `the archive of ${label(pin)} ended after ${n} of ${meta.archive_size_bytes} bytes`,
    );
  if (hash.digest('hex') !== meta.archive_sha256)
    throw new SkillStagingError(`the archive of ${label(pin)} does not match its SHA-256`);
}

const REGULAR = new Set(['File', 'OldFile']);

/**
 * Extracts a verified archive into `dest` (which must not exist): only regular files and directories,
 * each at a safe path below the version's directory (which is stripped). The Session-wide budget counts
 * actual member bytes and files. The staging tree is private and only ever gets files and directories
 * created here (exclusively), so nothing in it can redirect a write.
 */
async function extract(
  archive: string,
  meta: RemoteSkillVersion,
  dest: string,
  budget: { bytes: number; files: number; limits: StagingLimits },
  pin: SkillPinRef,
): Promise<void> {
  mkdirSync(dest, { recursive: true, mode: 0o755 });
  let failure: Error | undefined;
  const writes: Array<Promise<unknown>> = [];
  const fail = (e: Error) => (failure ??= e);
  const parser = new Parser({
    strict: true,
    onReadEntry: (entry: ReadEntry) => {
      try {
        if (failure) return void entry.resume();
        const raw = entry.path.replace(/\/+$/, '');
        const why = unsafeSkillPath(entry.type === 'Directory' ? `${raw}/x` : raw);
        if (why)
          throw new SkillStagingError(
            `${label(pin)} has an unsafe member ${JSON.stringify(entry.path.slice(0, 200))}: ${why}`,
          );
        const segments = raw.split('/');
        if (segments[0] !== meta.directory)
          throw new SkillStagingError(
            `${label(pin)} has a member outside "${meta.directory}/": ${JSON.stringify(raw.slice(0, 200))}`,
          );
        const target = join(dest, ...segments.slice(1));
        if (entry.type === 'Directory') {
          mkdirSync(target, { recursive: true, mode: 0o755 });
          return void entry.resume();
        }
        if (!REGULAR.has(entry.type))
          throw new SkillStagingError(
            `${label(pin)} has a ${entry.type} member "${raw.slice(0, 200)}": only regular files are allowed`,
          );
        budget.files += 1;
        budget.bytes += entry.size ?? 0;
        if (budget.files > budget.limits.files)
          throw new SkillStagingError(`the Session's Skills have more than ${budget.limits.files} files`);
        if (budget.bytes > budget.limits.expandedBytes)
          throw new SkillStagingError(
            `the Session's Skills have more than ${budget.limits.expandedBytes} expanded bytes`,
          );
        mkdirSync(dirname(target), { recursive: true, mode: 0o755 });
        const out = createWriteStream(target, {
          flags: 'wx',
          mode: (entry.mode ?? 0) & 0o111 ? 0o755 : 0o644,
        });
        writes.push(
          finished(out).catch((e: NodeJS.ErrnoException) =>
            fail(
              e.code === 'EEXIST' || e.code === 'EISDIR' || e.code === 'ENOTDIR'
                ? new SkillStagingError(
                    `${label(pin)} has the member "${raw.slice(0, 200)}" twice or as both a file and a directory`,
                  )
                : e,
            ),
          ),
        );
        entry.pipe(out);
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        fail(
          err instanceof SkillStagingError
            ? err
            : err.code === 'EEXIST' || err.code === 'ENOTDIR'
              ? new SkillStagingError(
                  `${label(pin)} uses "${entry.path.slice(0, 200)}" as both a file and a directory`,
                )
              : err,
        );
        entry.resume();
      }
    },
  });
  await new Promise<void>((resolve) => {
    parser.on('error', (e: Error) => {
      fail(new SkillStagingError(`the archive of ${label(pin)} is not a valid gzip tar: ${e.message}`));
      resolve();
    });
    parser.on('end', () => resolve());
    const input = createReadStream(archive);
    input.on('error', (e) => {
      fail(e);
      resolve();
    });
    input.pipe(parser);
  });
  await Promise.all(writes);
  if (failure) throw failure;
}

async function mkdtempIn(root: string): Promise<string> {
  const dir = join(root, `${STAGING_PREFIX}${randomBytes(8).toString('hex')}`);
  await mkdir(dir, { mode: 0o700 });
  return dir;
}

/** Staging directories of a run that died (never followed: rm does not traverse symlinks). */
async function removeLeftovers(root: string): Promise<void> {
  for (const name of await readdir(root))
    if (name.startsWith(STAGING_PREFIX)) await rm(join(root, name), { recursive: true, force: true });
}
