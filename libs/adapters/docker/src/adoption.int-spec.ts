import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { createDockerClient } from './docker-engine';
import {
  DockerItemLauncher,
  LABEL_ENVIRONMENT,
  LABEL_SESSION,
  LABEL_SUPERVISOR,
  LABEL_WORK,
} from './item-launcher';
import { SANDBOX_SOCKET_DIR, workApiSocketDir } from './work-api-socket';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ulid = () => '01J' + [...randomBytes(23)].map((b) => CROCKFORD[b % CROCKFORD.length]).join('');

/**
 * Startup reconciliation on the real dockerd (docs/operator-guide.md, "Supervisor restarts"): which of a
 * supervisor id's leftover containers are adopted and which removed, and an adopted container's Work API
 * socket served again in the directory it has mounted, then its clean-up on exit.
 */
describe('DockerItemLauncher adoption (real dockerd)', () => {
  const docker = createDockerClient(process.env.DOCKER_HOST);
  const supervisorId = `adopt-int-${process.pid}`;
  const environmentId = `env_${ulid()}`;
  const created: string[] = [];
  let socketRoot: string;
  let launcher: DockerItemLauncher;

  beforeAll(() => {
    socketRoot = mkdtempSync(join(tmpdir(), 'mango-adopt-int-'));
    launcher = new DockerItemLauncher({
      image: process.env.MANGO_BASE_IMAGE!,
      network: 'none',
      upstreamUrl: 'http://127.0.0.1:9', // never reached: the test only asks for refused routes
      socketRoot,
      supervisorId,
      environmentId,
    });
  });

  afterAll(async () => {
    for (const id of created)
      await docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => undefined);
    rmSync(socketRoot, { recursive: true, force: true });
  });

  /** A container as the launcher makes one (labels, name, env, socket mount), running `sleep`. */
  async function leftover(
    o: {
      env?: string;
      socketFrom?: string;
      start?: boolean;
      cmd?: string[];
    } = {},
  ): Promise<{ container: Docker.Container; workId: string; sessionId: string }> {
    const workId = `work_${ulid()}`;
    const sessionId = `sesn_${ulid()}`;
    const envId = o.env ?? environmentId;
    const socketDir = o.socketFrom ?? workApiSocketDir(socketRoot, workId);
    mkdirSync(socketDir, { recursive: true, mode: 0o755 });
    const container = await docker.createContainer({
      name: `mango-${workId.toLowerCase()}`,
      Image: process.env.MANGO_BASE_IMAGE!,
      Entrypoint: [(o.cmd ?? ['sleep', '300'])[0]!],
      Cmd: (o.cmd ?? ['sleep', '300']).slice(1),
      User: '1000:1000',
      Env: [
        `MANGO_WORK_ID=${workId}`,
        `MANGO_ENVIRONMENT_ID=${envId}`,
        'MANGO_WORK_TYPE=session',
        `MANGO_SESSION_ID=${sessionId}`,
      ],
      Labels: {
        [LABEL_WORK]: workId,
        [LABEL_ENVIRONMENT]: envId,
        [LABEL_SUPERVISOR]: supervisorId,
        [LABEL_SESSION]: sessionId,
      },
      HostConfig: { NetworkMode: 'none', Binds: [`${socketDir}:${SANDBOX_SOCKET_DIR}:ro`] },
    });
    created.push(container.id);
    if (o.start !== false) await container.start();
    if (o.cmd) await container.wait();
    return { container, workId, sessionId };
  }

  /** The status code a request from inside the container gets over its Work API socket (or an error). */
  async function fromInside(container: Docker.Container): Promise<string> {
    const exec = await container.exec({
      Cmd: [
        'node',
        '-e',
        "require('http').get({socketPath:'/run/mango/api.sock',path:'/v1/agents'},r=>console.log(r.statusCode)).on('error',e=>console.log(e.code))",
      ],
      AttachStdout: true,
      AttachStderr: true,
    });
    const stream = await exec.start({});
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    await new Promise((r) => stream.on('end', r));
    return Buffer.concat(chunks)
      .toString('utf8')
      .replace(/[^\x20-\x7e]/g, '')
      .trim();
  }

  it('adopts a running container that validates and removes the rest, each refusal with its reason', async () => {
    const good = await leftover();
    const otherEnv = await leftover({ env: `env_${ulid()}` });
    const otherSocket = await leftover({ socketFrom: mkdtempSync(join(tmpdir(), 'mango-adopt-other-')) });
    const exited = await leftover({ cmd: ['true'] });
    const never = await leftover({ start: false });
    // Before the supervisor serves it again the socket is dead: the runner's requests fail.
    expect(await fromInside(good.container)).toMatch(/ENOENT|ECONNREFUSED/);

    const { adoptable, removed, refused } = await launcher.reconcile();
    expect(adoptable.map((a) => a.containerId)).toEqual([good.container.id]);
    expect(adoptable[0]).toMatchObject({
      workId: good.workId,
      environmentId,
      workType: 'session',
      sessionId: good.sessionId,
    });
    expect(removed.sort()).toEqual([otherEnv, otherSocket, exited, never].map((c) => c.container.id).sort());
    expect(refused[otherEnv.container.id]).toMatch(/Environment/);
    expect(refused[otherSocket.container.id]).toMatch(/socket is not mounted from/);
    expect(Object.keys(refused).sort()).toEqual([otherEnv.container.id, otherSocket.container.id].sort());
    for (const c of [otherEnv, otherSocket, exited, never])
      await expect(c.container.inspect()).rejects.toMatchObject({ statusCode: 404 });

    // Adopted: the socket is served again where the container has it mounted (a route the Work token
    // may not use is refused locally with 403, so the server answering is the re-served socket).
    const outcome = launcher.adopt({
      container: adoptable[0]!,
      deadlineMs: 120_000,
      signal: new AbortController().signal,
    });
    let answered = '';
    for (let i = 0; i < 100 && answered !== '403'; i++) {
      answered = await fromInside(good.container);
      if (answered !== '403') await new Promise((r) => setTimeout(r, 100));
    }
    expect(answered).toBe('403');

    // On exit: the normal clean-up — container removed, socket directory gone.
    await good.container.kill({ signal: 'SIGKILL' });
    expect(await outcome).toEqual({ exitCode: 137, timedOut: false, cancelled: false });
    await expect(good.container.inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect(existsSync(workApiSocketDir(socketRoot, good.workId))).toBe(false);
  }, 120_000);
});
