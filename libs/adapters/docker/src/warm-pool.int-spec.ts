import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { createDockerClient } from './docker-engine';
import { DockerItemLauncher, LABEL_POOL, LABEL_SUPERVISOR, LABEL_WORK } from './item-launcher';
import { SANDBOX_SOCKET_DIR } from './work-api-socket';

const ROOT = join(__dirname, '../../../..');
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ulid = () => '01J' + [...randomBytes(23)].map((b) => CROCKFORD[b % CROCKFORD.length]).join('');

/**
 * The warm pool on the real dockerd (docs/operator-guide.md "Warm pool"): pooled containers run the real
 * item runner from this checkout and wait on stdin; what they hold before and after an assignment, their
 * one-item life, and their removal by reconciliation and shutdown. (A healthcheck served end to end
 * through the real API with the pool on: apps/supervisor/test/pool.e2e-spec.ts.)
 */
describe('DockerItemLauncher warm pool (real dockerd)', () => {
  const docker = createDockerClient(process.env.DOCKER_HOST);
  const supervisorId = `pool-int-${process.pid}`;
  const environmentId = `env_${ulid()}`;
  let socketRoot: string;
  const launchers: DockerItemLauncher[] = [];
  /** Mango's stand-in upstream of the Work API socket: it records each request and never answers. */
  let upstream: Server;
  const received: IncomingMessage[] = [];

  const launcher = (poolSize: number, id = supervisorId) => {
    const l = new DockerItemLauncher({
      image: process.env.MANGO_BASE_IMAGE!,
      network: 'none',
      upstreamUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      socketRoot,
      sourceDir: ROOT,
      supervisorId: id,
      environmentId,
      poolSize,
      workTtlSeconds: 30,
    });
    launchers.push(l);
    return l;
  };

  const pooled = async (id = supervisorId) =>
    docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_SUPERVISOR}=${id}`, LABEL_POOL] },
    });

  async function untilReady(l: DockerItemLauncher, n = 1): Promise<void> {
    for (let i = 0; i < 1500 && l.pooledReady < n; i++) await new Promise((r) => setTimeout(r, 100));
    expect(l.pooledReady).toBe(n);
  }

  beforeAll(async () => {
    socketRoot = mkdtempSync(join(tmpdir(), 'mango-pool-int-'));
    upstream = createServer((req) => received.push(req));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  });

  afterAll(async () => {
    for (const l of launchers) await l.closePool();
    for (const c of await docker.listContainers({ all: true, filters: { label: [LABEL_SUPERVISOR] } }))
      if (c.Labels[LABEL_SUPERVISOR]!.startsWith(supervisorId))
        await docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined);
    rmSync(socketRoot, { recursive: true, force: true });
    upstream.closeAllConnections();
    upstream.close();
  });

  it('a pooled container is hardened like a cold one, holds no Work or secret, and serves one item only', async () => {
    const l = launcher(1);
    l.startPool();
    await untilReady(l);
    const [slot] = await pooled();
    const before = await docker.getContainer(slot!.Id).inspect();
    // Nothing reachable before the Ack: its socket directory is empty.
    const socketDir = before.Mounts.find((m) => m.Destination === SANDBOX_SOCKET_DIR)!.Source;
    expect(readdirSync(socketDir)).toEqual([]);
    expect(before.Config.Labels[LABEL_WORK]).toBeUndefined();
    expect(
      (before.Config.Env ?? []).filter((e) => /^MANGO_(WORK_ID|ENVIRONMENT_ID|WORK_TYPE|SESSION)/.test(e)),
    ).toEqual([]);
    expect(before.Config.Env).toContain('MANGO_ITEM_ASSIGNMENT=stdin');

    // A healthcheck in the pooled container, and one in a cold container (a launcher without a pool):
    // their containers must be hardened alike.
    const token = `mango_wt_poolint${randomBytes(16).toString('hex')}`;
    const secret = Buffer.from(
      JSON.stringify({ sessions_token: token, api_base_url: 'http://mango.sandbox' }),
    ).toString('base64url');
    const cold = new Map<string, Docker.ContainerInspectInfo>();
    const events = (await docker.getEvents({
      filters: { type: ['container'], event: ['start'], label: [LABEL_WORK] },
    })) as NodeJS.ReadableStream & { destroy(): void };
    events.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        void docker
          .getContainer(JSON.parse(line).id as string)
          .inspect()
          .then(
            (i) => cold.set(i.Config.Labels[LABEL_WORK]!, i),
            () => undefined,
          );
    });
    const stop = new AbortController();
    const [a, b] = [`work_${ulid()}`, `work_${ulid()}`];
    const lines: string[] = [];
    const launch = (workId: string, by = l) =>
      by.launch({
        workId,
        environmentId,
        workType: 'healthcheck',
        secret,
        deadlineMs: 30_000,
        signal: stop.signal,
        onOutput: (line) => lines.push(line),
      });
    const outcomes = Promise.all([launch(a), launch(b, launcher(0))]);
    for (let i = 0; i < 1200 && !cold.has(b); i++) await new Promise((r) => setTimeout(r, 100));
    events.destroy();
    expect(cold.has(a)).toBe(false); // served by the pooled container: no container was made for it
    const coldInfo = cold.get(b)!;
    expect(coldInfo).toBeDefined();
    // Assigned: both runners got their Work over stdin and heartbeat with its token through their socket
    // (the pooled one through the socket opened in its slot's directory after the Ack).
    const heartbeatOf = (workId: string) =>
      received.find((r) => r.url?.includes(`/work/${workId}/heartbeat`));
    for (let i = 0; i < 1200 && !(heartbeatOf(a) && heartbeatOf(b)); i++)
      await new Promise((r) => setTimeout(r, 100));
    for (const w of [a, b]) expect(heartbeatOf(w)?.headers.authorization).toBe(`Bearer ${token}`);
    expect(readdirSync(socketDir)).toEqual(['api.sock']);
    const after = await docker.getContainer(slot!.Id).inspect();
    for (const info of [before, after]) {
      const text = JSON.stringify({
        env: info.Config.Env,
        cmd: info.Config.Cmd,
        entrypoint: info.Config.Entrypoint,
        labels: info.Config.Labels,
        args: info.Args,
      });
      expect(text).not.toContain(secret);
      expect(text).not.toContain(token);
      expect(text).not.toContain(a);
    }
    const hardening = (i: Docker.ContainerInspectInfo) => ({
      user: i.Config.User,
      entrypoint: i.Config.Entrypoint,
      cmd: i.Config.Cmd,
      stdinOnce: i.Config.StdinOnce,
      readonly: i.HostConfig.ReadonlyRootfs,
      capDrop: i.HostConfig.CapDrop,
      capAdd: i.HostConfig.CapAdd,
      securityOpt: i.HostConfig.SecurityOpt,
      privileged: i.HostConfig.Privileged,
      network: i.HostConfig.NetworkMode,
      pids: i.HostConfig.PidsLimit,
      memory: i.HostConfig.Memory,
      cpus: i.HostConfig.NanoCpus,
      tmpfs: i.HostConfig.Tmpfs,
      mounts: i.Mounts.map((m) => `${m.Type}:${m.Destination}:${m.RW}`).sort(),
    });
    expect(hardening(before)).toEqual(hardening(coldInfo));
    expect(hardening(before)).toMatchObject({
      user: '1000:1000',
      readonly: true,
      capDrop: ['ALL'],
      securityOpt: ['no-new-privileges'],
      network: 'none',
    });
    expect(lines.join('\n')).not.toContain(token);

    stop.abort();
    await outcomes;
    // Used once: the pooled container and its socket directory are gone, and a new one replaces it.
    await expect(docker.getContainer(slot!.Id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect(existsSync(socketDir)).toBe(false);
    await untilReady(l);
    const [next] = await pooled();
    expect(next!.Id).not.toBe(slot!.Id);

    // Two at once with one idle container: the second waits for the container being made (it is ahead
    // of a cold start) instead of starting a cold one. Neither gets a container of its own.
    const [c, d] = [`work_${ulid()}`, `work_${ulid()}`];
    const made: string[] = [];
    const creates = (await docker.getEvents({
      filters: { type: ['container'], event: ['create'], label: [LABEL_WORK] },
    })) as NodeJS.ReadableStream & { destroy(): void };
    // Only this test's launcher counts: other suites on the same dockerd make Work containers too.
    creates.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const labels = (JSON.parse(line) as { Actor?: { Attributes?: Record<string, string> } }).Actor
          ?.Attributes;
        if (labels?.[LABEL_SUPERVISOR]?.startsWith(supervisorId)) made.push(line);
      }
    });
    const stop2 = new AbortController();
    const both = Promise.all(
      [c, d].map((workId) =>
        l.launch({
          workId,
          environmentId,
          workType: 'healthcheck',
          secret,
          deadlineMs: 30_000,
          signal: stop2.signal,
        }),
      ),
    );
    for (let i = 0; i < 1200 && !(heartbeatOf(c) && heartbeatOf(d)); i++)
      await new Promise((r) => setTimeout(r, 100));
    creates.destroy();
    for (const w of [c, d]) expect(heartbeatOf(w)?.headers.authorization).toBe(`Bearer ${token}`);
    expect(made).toEqual([]);
    stop2.abort();
    await both;
    await untilReady(l);

    // Shutdown: the idle pool is removed with its socket directories.
    await l.closePool();
    expect(await pooled()).toEqual([]);
    expect(readdirSync(socketRoot).filter((d) => d.startsWith('pool-'))).toEqual([]);
  }, 180_000);

  it('reconciliation at start removes the pool containers an earlier run left, and only their socket directories', async () => {
    // Labelled as the pool makes them (an earlier run killed with -9 leaves them running), one with its
    // socket directory under the socket root, one with a directory elsewhere: that one is not touched.
    const outside = mkdtempSync(join(tmpdir(), 'mango-pool-outside-'));
    const made: string[] = [];
    const inside = join(socketRoot, `pool-${randomBytes(8).toString('hex')}`);
    for (const dir of [inside, outside]) {
      mkdirSync(dir, { recursive: true });
      const c = await docker.createContainer({
        name: `mango-pool-${randomBytes(8).toString('hex')}`,
        Image: process.env.MANGO_BASE_IMAGE!,
        Entrypoint: ['sleep'],
        Cmd: ['300'],
        User: '1000:1000',
        Labels: { [LABEL_POOL]: 'x', [LABEL_SUPERVISOR]: `${supervisorId}-r` },
        HostConfig: { NetworkMode: 'none', Binds: [`${dir}:${SANDBOX_SOCKET_DIR}:ro`] },
      });
      await c.start();
      made.push(c.id);
    }
    const {
      pooled: removed,
      removed: others,
      adoptable,
    } = await launcher(0, `${supervisorId}-r`).reconcile();
    expect(removed.sort()).toEqual(made.sort());
    expect(others).toEqual([]);
    expect(adoptable).toEqual([]);
    for (const id of made)
      await expect(docker.getContainer(id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect(existsSync(inside)).toBe(false);
    expect(existsSync(outside)).toBe(true);
    rmSync(outside, { recursive: true, force: true });
  }, 60_000);

  it('pool size 0 starts no pooled container', async () => {
    const l = launcher(0, `${supervisorId}-0`);
    l.startPool();
    await new Promise((r) => setTimeout(r, 1000));
    expect(l.pooledReady).toBe(0);
    expect(await pooled(`${supervisorId}-0`)).toEqual([]);
  });
});
