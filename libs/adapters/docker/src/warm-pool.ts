import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { POOLED_RUNNER_READY } from '@mango/domain-work-lease';
import {
  attachStdio,
  HEALTHCHECK_TMPFS,
  LABEL_ENVIRONMENT,
  LABEL_POOL,
  LABEL_SUPERVISOR,
  sandboxBaseEnv,
  sandboxContainer,
  type SandboxSettings,
} from './sandbox-container';
import { POOL_SOCKET_PREFIX } from './work-api-socket';

/** How long a new pooled container may take to load its runner before it is given up. */
const READY_WITHIN_MS = 60_000;

export interface PoolSettings extends SandboxSettings {
  socketRoot: string;
  supervisorId: string;
  environmentId?: string;
}

/** A started, hardened container whose runner is loaded and waits on stdin for its one assignment. */
export interface PoolSlot {
  id: string;
  containerId: string;
  /** Its Work API socket directory: empty (nothing reachable) until its Work is assigned. */
  socketDir: string;
  /** The attached one-shot stdin (and output): the assignment is the only thing ever written to it. */
  io: NodeJS.ReadWriteStream;
  /** Its `next-exit` wait, requested before it started. */
  exited: Promise<unknown>;
  /** Where its output lines go from now on (before the assignment: nowhere but the readiness check). */
  onOutput(fn: (line: string) => void): void;
}

export interface PoolDeps {
  docker: Docker;
  streams: Docker;
  forwardLines(io: NodeJS.ReadableStream, onOutput: (line: string) => void): void;
  removeContainer(id: string): Promise<void>;
  /** Told when a container could not be added to the pool (it retries with a backoff). */
  onError?(err: unknown): void;
}

/**
 * The warm pool (docs/operator-guide.md "Warm pool"): up to `size` pre-created, hardened, started Work
 * containers for healthcheck Work, each with its runner loaded and waiting on stdin, none holding a Work
 * id, a secret or a Session's workspace. `take` hands one out for exactly one Work item (the caller
 * removes it afterwards: never reused) and the pool refills in the background. A pooled container that
 * exits while idle is removed and replaced.
 */
export class WarmPool {
  private readonly idle: PoolSlot[] = [];
  /** Every container of this pool not handed out yet (idle or still loading), for `close`. */
  private readonly owned = new Map<string, string>();
  private filling = 0;
  /** `take` calls waiting for a container being made (each is handed the next one ready). */
  private readonly waiters: Array<(slot: PoolSlot | undefined) => void> = [];
  private failures = 0;
  private closed = false;
  private retry?: NodeJS.Timeout;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly settings: PoolSettings,
    private readonly size: number,
    private readonly deps: PoolDeps,
  ) {}

  start(): void {
    this.refill();
  }

  /**
   * A ready pooled container; else the next one of those being made (it is ahead of a cold start: created
   * earlier), waited for up to `waitMs`; else undefined (the caller starts a cold one).
   */
  async take(waitMs: number, signal?: AbortSignal): Promise<PoolSlot | undefined> {
    let slot = this.idle.shift();
    if (!slot && !this.closed && this.filling > this.waiters.length) {
      let timer: NodeJS.Timeout | undefined;
      let gaveUp: () => void = () => undefined;
      slot = await new Promise<PoolSlot | undefined>((resolve) => {
        this.waiters.push(resolve);
        // Removed at once, so a container made later goes to the idle pool instead of to no one.
        gaveUp = () => {
          const at = this.waiters.indexOf(resolve);
          if (at >= 0) this.waiters.splice(at, 1);
          resolve(undefined);
        };
        timer = setTimeout(gaveUp, waitMs);
        signal?.addEventListener('abort', gaveUp, { once: true });
      });
      clearTimeout(timer);
      signal?.removeEventListener('abort', gaveUp);
    }
    if (slot) this.owned.delete(slot.id);
    this.refill();
    return slot;
  }

  /** Idle containers now (for tests and logs). */
  get ready(): number {
    return this.idle.length;
  }

  /** Drain/shutdown: no more refills; every container not handed out is removed. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.idle.length = 0;
    for (const w of this.waiters.splice(0)) w(undefined);
    await Promise.all([...this.owned.keys()].map((id) => this.discard(id)));
    await Promise.allSettled([...this.pending]); // each removes its own container once it sees `closed`
  }

  private refill(): void {
    if (this.retry) return; // backing off after a failure
    while (!this.closed && this.idle.length + this.filling - this.waiters.length < this.size) {
      this.filling++;
      const filled = this.fill()
        .then(
          () => {
            this.failures = 0;
          },
          (err: unknown) => {
            this.waiters.shift()?.(undefined); // it waited for this one: it starts cold now
            if (this.closed) return;
            this.failures++;
            this.deps.onError?.(err);
            const backoff = Math.min(1000 * 2 ** (this.failures - 1), 30_000);
            this.retry = setTimeout(() => {
              this.retry = undefined;
              this.refill();
            }, backoff);
            this.retry.unref();
          },
        )
        .finally(() => {
          this.filling--;
          this.pending.delete(filled);
          this.refill(); // a waiter it was handed to may have left the pool short
        });
      this.pending.add(filled);
    }
  }

  private async fill(): Promise<void> {
    const id = randomBytes(8).toString('hex');
    const socketDir = join(this.settings.socketRoot, `${POOL_SOCKET_PREFIX}${id}`);
    mkdirSync(socketDir, { recursive: true, mode: 0o755 });
    chmodSync(socketDir, 0o755); // whatever the umask: the sandbox uid must reach the socket later
    this.owned.set(id, '');
    let containerId: string | undefined;
    try {
      const container = await this.deps.docker.createContainer(
        sandboxContainer(this.settings, {
          name: `mango-pool-${id}`,
          env: [...sandboxBaseEnv(this.settings), 'MANGO_ITEM_ASSIGNMENT=stdin'],
          labels: {
            [LABEL_POOL]: id,
            [LABEL_SUPERVISOR]: this.settings.supervisorId,
            ...(this.settings.environmentId ? { [LABEL_ENVIRONMENT]: this.settings.environmentId } : {}),
          },
          mounts: { Tmpfs: HEALTHCHECK_TMPFS },
          socketDir,
        }),
      );
      containerId = container.id;
      this.owned.set(id, containerId);
      if (this.closed) throw new Error('the pool was closed');
      const io = await attachStdio(this.deps.streams, containerId);
      // The attach stream lives as long as the slot: a broken one (a dockerd restart) must not throw.
      let broken: (() => void) | undefined;
      const streamGone = new Promise<void>((r) => (broken = r));
      io.on('error', () => broken?.());
      io.on('close', () => broken?.());
      io.on('end', () => broken?.());
      let output: ((line: string) => void) | undefined;
      let readied: (() => void) | undefined;
      const ready = new Promise<void>((r) => (readied = r));
      this.deps.forwardLines(io, (line) => {
        if (output) return output(line);
        if (line.includes(POOLED_RUNNER_READY) && isReadyLine(line)) readied?.();
      });
      const exited = this.deps.streams.getContainer(containerId).wait({ condition: 'next-exit' });
      exited.catch(() => undefined);
      await container.start();
      if (this.closed) throw new Error('the pool was closed');
      let timer: NodeJS.Timeout | undefined;
      const first = await Promise.race([
        ready.then(() => 'ready' as const),
        exited.then(
          () => 'exited' as const,
          () => 'exited' as const,
        ),
        streamGone.then(() => 'lost its stdin' as const),
        new Promise<'slow'>((r) => (timer = setTimeout(() => r('slow'), READY_WITHIN_MS))),
      ]).finally(() => clearTimeout(timer));
      if (first !== 'ready') throw new Error(`a pooled container ${first} before its runner was ready`);
      if (this.closed) throw new Error('the pool was closed');
      const slot: PoolSlot = { id, containerId, socketDir, io, exited, onOutput: (fn) => (output = fn) };
      const waiter = this.waiters.shift();
      if (waiter) waiter(slot);
      else this.idle.push(slot);
      // Exited while idle (killed, OOM), or its stdin is lost (a dockerd restart closes the attach stream,
      // and the wait request may then never answer): removed and replaced.
      void Promise.race([exited.catch(() => undefined), streamGone]).then(async () => {
        const at = this.idle.indexOf(slot);
        if (at < 0) return; // handed out: its taker removes it
        this.idle.splice(at, 1);
        await this.discard(id);
        this.refill();
      });
    } catch (err) {
      this.owned.set(id, containerId ?? '');
      await this.discard(id);
      throw err;
    }
  }

  /** Removes a container of the pool that was not handed out, and its (empty) socket directory. */
  private async discard(id: string): Promise<void> {
    const containerId = this.owned.get(id);
    this.owned.delete(id);
    if (containerId) await this.deps.removeContainer(containerId).catch(() => undefined);
    rmSync(join(this.settings.socketRoot, `${POOL_SOCKET_PREFIX}${id}`), { recursive: true, force: true });
  }
}

function isReadyLine(line: string): boolean {
  try {
    return (JSON.parse(line) as { msg?: unknown }).msg === POOLED_RUNNER_READY;
  } catch {
    return false;
  }
}
