import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, realpath, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import {
  MEMORY_MARKER_FILE,
  MEMORY_MOUNT_ROOT,
  memoryMarkerContent,
  normalizeMemoryPath,
  planDeletions,
  planPull,
  planPush,
} from '@mango/domain-memory';
import type { ItemLog } from '../item-options';
import type { ToolRoot } from '../tools/types';
import { backoffMs, sleep } from '../backoff';
import { isTemporaryMemoryError, MemoryApi, MemoryApiError, RemoteMemory } from './memory-client';

/** A Session's `memory_store` resource, as the Session snapshot shows it. */
export interface MemoryAttachment {
  memory_store_id: string;
  access?: 'read_write' | 'read_only' | null;
  mount_path?: string | null;
  name?: string | null;
}

export interface MemorySyncOptions {
  client: MemoryApi;
  sessionId: string;
  attachments: MemoryAttachment[];
  /** Where Stores are mounted: `/mnt/memory` in the sandbox (a temporary directory in tests). */
  root?: string;
  /** Cadence of full passes (15 s; docs/api-guide.md, Memory on the worker). 0 disables the timer (`syncIfDue`/`syncOnce` still work). */
  intervalMs?: number;
  log?: ItemLog;
  /** Largest file pushed (bytes); larger local files are skipped with a warning. */
  maxContentBytes?: number;
  /** Attempts at a Store's first download before a temporary failure is given up (default 5, as Skill staging). */
  mountAttempts?: number;
  /** Base delay of the mount retries' backoff (default 250 ms; tests shorten it). */
  backoffBaseMs?: number;
}

export interface SyncReport {
  pulled: number;
  pushed: number;
  deleted: number;
  removedLocally: number;
  /** Stores skipped because their marker (or root) was missing or altered. */
  refused: string[];
}

interface Baseline {
  id: string;
  sha: string;
}

interface LocalFile {
  sha: string;
  content: string;
}

interface MountedStore {
  id: string;
  dir: string;
  readOnly: boolean;
  baseline: Map<string, Baseline>;
  /** Paths whose file was seen missing, and how many passes in a row. */
  missing: Map<string, number>;
  /** `start` made this root, so `dispose` may remove it; a root it refused is never removed. */
  created?: boolean;
}

const TMP_PREFIX = '.mango-sync-';
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
// ignoreBOM: a leading byte-order mark stays in the content, so its digest is the file's (else every pass re-pushed).
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const SILENT: ItemLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Thrown when a Store cannot be mounted (its root already exists, the initial pull failed for good). */
export class MemoryMountError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MemoryMountError';
  }
}

/**
 * Memory Stores on the worker (see docs/api-guide.md, Memory on the worker): each attached Store is downloaded to its absolute
 * `/mnt/memory/<name>` root with a marker file, then reconciled by path every `intervalMs` (and after
 * tool calls, through `syncIfDue`):
 * - remote changes win: a remotely changed or deleted Memory replaces (or removes) the local file, even
 *   if it was edited locally — that local edit is discarded and logged;
 * - local changes go up through create, or update with a `content_sha256` precondition on the last
 *   synchronized digest (a concurrent remote change makes it 409 and the next pass pulls);
 * - a local deletion is pushed (with `expected_content_sha256`) only when the file is seen missing by a
 *   second pass;
 * - a missing or altered marker (or a root that is no longer a plain directory) refuses every upload,
 *   deletion and download for that Store;
 * - `read_only` attachments are only ever pulled.
 * `finalSync` runs one bounded full pass (clean end); `flush` one bounded push-only pass that never pulls
 * or deletes (every end). Passes never overlap. Neither touches the Work lease: the caller keeps
 * heartbeating through teardown, and the server fences each write with the live lease.
 */
export class MemorySync {
  private stores: MountedStore[];
  private readonly log: ItemLog;
  private readonly intervalMs: number;
  private readonly maxContentBytes: number;
  private timer?: NodeJS.Timeout;
  private chain: Promise<unknown> = Promise.resolve();
  private lastPassAt = 0;
  private disposed = false;

  constructor(private readonly o: MemorySyncOptions) {
    this.log = o.log ?? SILENT;
    this.intervalMs = o.intervalMs ?? 15_000;
    this.maxContentBytes = o.maxContentBytes ?? 102_400;
    const root = o.root ?? MEMORY_MOUNT_ROOT;
    const used = new Set<string>();
    this.stores = o.attachments.map((a) => {
      const name = a.mount_path ? basename(a.mount_path) : (a.name ?? a.memory_store_id);
      if (!name || name === '.' || name === '..' || name.includes(sep) || used.has(name))
        throw new MemoryMountError(`memory store ${a.memory_store_id} has an unusable mount name`);
      used.add(name);
      return {
        id: a.memory_store_id,
        dir: join(root, name),
        readOnly: a.access === 'read_only',
        baseline: new Map(),
        missing: new Map(),
      };
    });
  }

  /** The mounted roots, for the file tools (`read_only` Stores as read-only roots). */
  get roots(): ToolRoot[] {
    return this.stores.map((s) => ({ path: s.dir, readOnly: s.readOnly }));
  }

  /**
   * Creates each Store's root (refusing one that already exists), writes its marker and downloads every
   * Memory; then starts the cadence timer. A temporary failure of the download (no response, 408, 429,
   * 5xx) is retried — `mountAttempts` in all, jittered backoff — on a root emptied again, so a Memory
   * deleted remotely between two attempts is not left behind to be pushed back. Any other failure, or
   * the last attempt's, is a MemoryMountError (the activation leaves its lease to expire). A Store that
   * no longer exists (deleted after the Session attached it: its listing answers 404) is not mounted:
   * the Session goes on without it, and a warning is logged.
   */
  async start(signal?: AbortSignal): Promise<ToolRoot[]> {
    const attempts = this.o.mountAttempts ?? 5;
    const gone = new Set<MountedStore>();
    for (const s of this.stores) {
      try {
        await mkdir(dirname(s.dir), { recursive: true, mode: 0o755 });
        await mkdir(s.dir, { mode: 0o700 });
        s.created = true;
      } catch (err) {
        throw new MemoryMountError(
          (err as NodeJS.ErrnoException).code === 'EEXIST'
            ? `the mount root of memory store ${s.id} already exists`
            : `cannot create the mount root of memory store ${s.id}: ${String(err)}`,
        );
      }
      for (let attempt = 1; ; attempt++) {
        try {
          await this.download(s, signal);
          break;
        } catch (err) {
          if (err instanceof StoreGone && !signal?.aborted) {
            this.log.warn({ memory_store_id: s.id }, 'memory store no longer exists: not mounted');
            await rm(s.dir, { recursive: true, force: true });
            gone.add(s);
            break;
          }
          const again = isTemporaryMemoryError(err) || err instanceof MemoryVanished;
          if (signal?.aborted || !again || attempt >= attempts)
            throw new MemoryMountError(
              `downloading memory store ${s.id} failed: ${String(err)}${attempt > 1 ? ` (after ${attempt} attempts)` : ''}`,
            );
          this.log.warn(
            { memory_store_id: s.id, attempt, err: String(err) },
            'memory store download failed; retrying',
          );
          await sleep(backoffMs(attempt - 1, { baseMs: this.o.backoffBaseMs ?? 250, maxMs: 8_000 }), signal);
          await rm(s.dir, { recursive: true, force: true });
          await mkdir(s.dir, { mode: 0o700 });
          s.baseline.clear();
        }
      }
      if (!gone.has(s))
        this.log.info(
          { memory_store_id: s.id, memories: s.baseline.size, read_only: s.readOnly },
          'memory store mounted',
        );
    }
    this.stores = this.stores.filter((s) => !gone.has(s));
    this.lastPassAt = Date.now();
    if (this.intervalMs > 0) {
      this.timer = setInterval(() => void this.syncIfDue().catch(() => undefined), this.intervalMs);
      this.timer.unref();
    }
    return this.roots;
  }

  /** One attempt at a Store's first download: its marker, then every Memory, each recorded as the baseline. */
  private async download(s: MountedStore, signal?: AbortSignal): Promise<void> {
    await writeFile(join(s.dir, MEMORY_MARKER_FILE), memoryMarkerContent(s.id), { mode: 0o400 });
    const notFound = (err: unknown) => err instanceof MemoryApiError && err.status === 404;
    const remote = await this.listRemote(s, 'full', signal).catch((err: unknown) => {
      throw notFound(err) ? new StoreGone() : err;
    });
    for (const r of remote.values()) {
      const content =
        r.content ??
        (
          await this.o.client.get(s.id, r.id, signal).catch((err: unknown) => {
            throw notFound(err) ? new MemoryVanished() : err; // deleted since the listing: start over
          })
        ).content;
      await this.writeLocal(s, r.path, content ?? '');
      s.baseline.set(r.path, { id: r.id, sha: r.content_sha256 });
    }
  }

  /** A full pass if the last one started at least `intervalMs` ago (call after each tool call). */
  async syncIfDue(): Promise<SyncReport | undefined> {
    if (this.disposed || Date.now() - this.lastPassAt < this.intervalMs) return undefined;
    return this.syncOnce();
  }

  /** One full pass now (after any pass in progress). */
  syncOnce(signal?: AbortSignal): Promise<SyncReport> {
    return this.enqueue(() => this.pass('full', signal));
  }

  /** The clean-end final full sync, bounded by `deadline` (a Date, or milliseconds from now; default 30 s). */
  finalSync(deadline: Date | number = 30_000): Promise<SyncReport> {
    return this.bounded(deadline, (signal) => this.pass('full', signal));
  }

  /** The push-only flush every end gets: local creates and updates only, bounded by `deadline`. */
  flush(deadline: Date | number = 30_000): Promise<SyncReport> {
    return this.bounded(deadline, (signal) => this.pass('push', signal));
  }

  /**
   * Stops the timer, waits for a pass in progress and (by default) removes the roots `start` created —
   * never one it refused because it already existed.
   */
  async dispose(opts: { removeDirs?: boolean } = {}): Promise<void> {
    this.disposed = true;
    clearInterval(this.timer);
    await this.chain.catch(() => undefined);
    if (opts.removeDirs ?? true)
      for (const s of this.stores) if (s.created) await rm(s.dir, { recursive: true, force: true });
  }

  // ── Passes ─────────────────────────────────────────────────────────────────────────────────────────

  private enqueue<T>(run: () => Promise<T>): Promise<T> {
    const next = this.chain.catch(() => undefined).then(run);
    this.chain = next;
    return next;
  }

  private bounded(
    deadline: Date | number,
    run: (signal: AbortSignal) => Promise<SyncReport>,
  ): Promise<SyncReport> {
    const ms = typeof deadline === 'number' ? deadline : deadline.getTime() - Date.now();
    const signal = AbortSignal.timeout(Math.max(0, ms));
    const queued = this.enqueue(() => run(signal));
    // Waiting for a pass in progress also counts against the bound.
    return Promise.race([
      queued,
      new Promise<SyncReport>((_, reject) =>
        signal.addEventListener('abort', () => reject(new Error('memory sync deadline passed')), {
          once: true,
        }),
      ),
    ]);
  }

  private async pass(mode: 'full' | 'push', signal?: AbortSignal): Promise<SyncReport> {
    this.lastPassAt = Date.now();
    const report: SyncReport = { pulled: 0, pushed: 0, deleted: 0, removedLocally: 0, refused: [] };
    for (const s of this.stores) {
      signal?.throwIfAborted();
      if (s.readOnly && mode === 'push') continue;
      if (!(await this.markerIntact(s))) {
        this.log.warn(
          { memory_store_id: s.id },
          'memory store marker missing or altered: not synchronizing it',
        );
        report.refused.push(s.id);
        continue;
      }
      try {
        const local = await this.scanLocal(s);
        if (mode === 'full') await this.pull(s, local, report, signal);
        if (!s.readOnly) await this.push(s, local, mode === 'full', report, signal);
      } catch (err) {
        if (signal?.aborted) throw err;
        this.log.warn(
          { memory_store_id: s.id, err: String(err) },
          'memory sync pass failed; retrying next pass',
        );
      }
    }
    return report;
  }

  /** Remote wins: runs `planPull` (domain-memory) — downloads, adoptions and local removals. */
  private async pull(
    s: MountedStore,
    local: Map<string, LocalFile>,
    report: SyncReport,
    signal?: AbortSignal,
  ) {
    const remote = await this.listRemote(s, 'basic', signal);
    const states = new Map(
      [...remote].map(([path, r]) => [path, { id: r.id, path: r.path, sha: r.content_sha256 }]),
    );
    for (const step of planPull(s.baseline, states, local)) {
      switch (step.kind) {
        case 'adopt':
          s.baseline.set(step.path, { id: step.id, sha: step.sha });
          break;
        case 'download': {
          if (step.conflict)
            this.log.warn(
              { memory_store_id: s.id, path: step.path },
              'memory changed remotely and locally: remote wins',
            );
          const full = await this.o.client.get(s.id, step.id, signal);
          try {
            await this.writeLocal(s, step.path, full.content ?? '');
          } catch (err) {
            // e.g. a tool replaced a directory with a symlink out of the root: skip it, retry next pass.
            this.log.warn(
              { memory_store_id: s.id, path: step.path, err: String(err) },
              'memory not written locally',
            );
            break;
          }
          s.baseline.set(step.path, { id: full.id, sha: full.content_sha256 });
          local.set(step.path, { sha: full.content_sha256, content: full.content ?? '' });
          s.missing.delete(step.path);
          report.pulled++;
          break;
        }
        case 'remove':
          if (step.conflict)
            this.log.warn(
              { memory_store_id: s.id, path: step.path },
              'memory deleted remotely and changed locally: remote wins',
            );
          await unlink(this.localPath(s, step.path)).catch(() => undefined);
          local.delete(step.path);
          report.removedLocally++;
          s.baseline.delete(step.path);
          s.missing.delete(step.path);
          break;
        case 'forget':
          s.baseline.delete(step.path);
          s.missing.delete(step.path);
          break;
      }
    }
  }

  /** Local creates and updates with preconditions (`planPush`); deletions after a second observation (`planDeletions`). */
  private async push(
    s: MountedStore,
    local: Map<string, LocalFile>,
    deletions: boolean,
    report: SyncReport,
    signal?: AbortSignal,
  ) {
    for (const path of local.keys()) s.missing.delete(path);
    for (const step of planPush(s.baseline, local)) {
      const l = local.get(step.path)!;
      try {
        const m =
          step.kind === 'update'
            ? await this.o.client.update(
                s.id,
                step.id,
                {
                  content: l.content,
                  precondition: { type: 'content_sha256', content_sha256: step.expectedSha },
                },
                signal,
              )
            : await this.o.client.create(s.id, { path: step.path, content: l.content }, signal);
        s.baseline.set(step.path, { id: m.id, sha: m.content_sha256 });
        report.pushed++;
      } catch (err) {
        if (!(err instanceof MemoryApiError)) throw err;
        // 409: changed or taken remotely (the next full pass pulls: remote wins); 404: gone remotely.
        if (err.status === 404 && step.kind === 'update') s.baseline.delete(step.path);
        this.log.warn(
          { memory_store_id: s.id, path: step.path, status: err.status, type: err.errorType },
          'memory push refused',
        );
      }
    }
    if (!deletions) return;
    for (const step of planDeletions(s.baseline, local, s.missing)) {
      s.missing.set(step.path, step.seen);
      if (step.kind === 'wait') continue;
      try {
        await this.o.client.delete(s.id, step.id, step.expectedSha, signal);
        report.deleted++;
        s.baseline.delete(step.path);
        s.missing.delete(step.path);
      } catch (err) {
        if (!(err instanceof MemoryApiError)) throw err;
        if (err.status === 404) {
          s.baseline.delete(step.path);
          s.missing.delete(step.path);
        }
        this.log.warn(
          { memory_store_id: s.id, path: step.path, status: err.status, type: err.errorType },
          'memory delete refused',
        );
      }
    }
  }

  // ── Files ──────────────────────────────────────────────────────────────────────────────────────────

  private async markerIntact(s: MountedStore): Promise<boolean> {
    try {
      const root = await lstat(s.dir);
      if (!root.isDirectory() || root.isSymbolicLink()) return false;
      const marker = join(s.dir, MEMORY_MARKER_FILE);
      if (!(await lstat(marker)).isFile()) return false;
      return (await readFile(marker, 'utf8')) === memoryMarkerContent(s.id);
    } catch {
      return false;
    }
  }

  /** Regular files below the root (symlinks and special files ignored) whose relative path is a valid Memory path. */
  private async scanLocal(s: MountedStore): Promise<Map<string, LocalFile>> {
    const out = new Map<string, LocalFile>();
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        const full = join(dir, entry.name);
        if (entry.isDirectory()) {
          await walk(full);
          continue;
        }
        if (!entry.isFile() || entry.name.startsWith(TMP_PREFIX)) continue;
        if (dir === s.dir && entry.name === MEMORY_MARKER_FILE) continue;
        const path = `/${relative(s.dir, full).split(sep).join('/')}`;
        try {
          if (normalizeMemoryPath(path) !== path) throw new Error('not a normalized path');
        } catch {
          this.log.warn(
            { memory_store_id: s.id, path },
            'file name is not a valid memory path: not synchronized',
          );
          continue;
        }
        const info = await lstat(full);
        if (info.size > this.maxContentBytes) {
          this.log.warn(
            { memory_store_id: s.id, path, size: info.size },
            'file too large for a memory: not synchronized',
          );
          continue;
        }
        const bytes = await readFile(full);
        let content: string;
        try {
          content = utf8.decode(bytes);
        } catch {
          this.log.warn({ memory_store_id: s.id, path }, 'file is not UTF-8 text: not synchronized');
          continue;
        }
        out.set(path, { sha: sha256(bytes), content });
      }
    };
    await walk(s.dir);
    return out;
  }

  private localPath(s: MountedStore, path: string): string {
    return join(s.dir, ...path.slice(1).split('/'));
  }

  /**
   * Writes a pulled Memory atomically (temporary file, then rename over the target, which replaces a
   * symlink rather than following it). Refuses when the parent directory resolves outside the root.
   */
  private async writeLocal(s: MountedStore, path: string, content: string): Promise<void> {
    if (path === `/${MEMORY_MARKER_FILE}`) {
      this.log.warn({ memory_store_id: s.id, path }, 'a memory at the marker path is not written');
      return;
    }
    normalizeMemoryPath(path);
    const target = this.localPath(s, path);
    const root = await realpath(s.dir);
    const inside = (p: string) => p === root || p.startsWith(root + sep);
    // The deepest existing ancestor must resolve inside the root before any directory is created, so a
    // directory a tool replaced with a symlink is never followed out of it.
    let existing = dirname(target);
    for (;;) {
      try {
        existing = await realpath(existing);
        break;
      } catch {
        existing = dirname(existing);
      }
    }
    if (!inside(existing)) throw new Error(`refusing to write ${path}: its directory leaves the memory root`);
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    const parent = await realpath(dirname(target));
    if (!inside(parent)) throw new Error(`refusing to write ${path}: its directory leaves the memory root`);
    const tmp = join(parent, `${TMP_PREFIX}${randomBytes(6).toString('hex')}`);
    await writeFile(tmp, content, { mode: 0o600 });
    await rename(tmp, join(parent, basename(target)));
  }

  private async listRemote(
    s: MountedStore,
    view: 'basic' | 'full',
    signal?: AbortSignal,
  ): Promise<Map<string, RemoteMemory>> {
    const out = new Map<string, RemoteMemory>();
    let page: string | undefined;
    do {
      const res = await this.o.client.list(s.id, { view, limit: view === 'full' ? 20 : 100, page }, signal);
      for (const m of res.data)
        if (!('type' in m && m.type === 'memory_prefix')) out.set(m.path, m as RemoteMemory);
      page = res.next_page ?? undefined;
    } while (page);
    return out;
  }
}

/** The Store's listing answered 404: it was deleted after the Session attached it. */
class StoreGone extends Error {}
/** A listed Memory answered 404 when read: deleted meanwhile, so the download starts over. */
class MemoryVanished extends Error {}
