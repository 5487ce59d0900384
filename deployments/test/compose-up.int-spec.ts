import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startScriptedModel, ScriptedModelServer } from '@mango/testing';

/**
 * `docker-compose up` of deployments/compose/compose.yaml as an operator runs it, from locally built images
 * (tools/docker/compose-images.sh: no registry; Mango's are mango-control-plane and mango-sandbox from
 * deployments/docker, as tools/docker/build-images.sh builds them), on the test dockerd (no bridge): the
 * loopback override puts every service on the host network bound to 127.0.0.1. Up (every service healthy),
 * the migrate service exits 0, keys from the documented `run --rm migrate mango api-key create …`, the
 * supervisor profile (uid 10001, the socket's group), a healthcheck `succeeded`, a scripted-model turn whose
 * bash call runs in a sealed sandbox of the sandbox image, then `down -v` (always).
 */
const ROOT = join(__dirname, '../..');
const COMPOSE_DIR = join(ROOT, 'deployments/compose');
const PROJECT = `mangocompose${process.pid}`;

function sh(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { cwd: ROOT, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err)
          reject(
            new Error(
              `${cmd} ${args.join(' ')}: ${err.message}\n${stdout.slice(-4000)}${stderr.slice(-8000)}`,
            ),
          );
        else resolve(stdout);
      },
    );
  });
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * A free port below 32768, for Temporal's membership ports (a PostgreSQL smallint in its cluster_membership
 * table; the kernel's ephemeral ports start at 32768).
 */
async function freeLowPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const s = createServer();
    const ok = await new Promise<boolean>((r) => {
      s.once('error', () => r(false));
      s.listen(port, '127.0.0.1', () => r(true));
    });
    if (ok) {
      await new Promise((r) => s.close(r));
      return port;
    }
  }
}

async function until<T>(fn: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The scripted agent: runs the asked command in bash, then reports what the sandbox said. */
function agentReply(body: any) {
  const last = body.messages.at(-1);
  const blocks = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
  if (blocks.some((b: any) => b.type === 'tool_result'))
    return { content: [{ type: 'text', text: 'Done.' }] };
  const asked = /Run this in bash: (.*)$/s.exec(blocks.find((b: any) => b.type === 'text')?.text ?? '');
  if (!asked) return { content: [{ type: 'text', text: 'Hello.' }] };
  return {
    content: [{ type: 'tool_use', id: `toolu_${Date.now()}`, name: 'bash', input: { command: asked[1] } }],
    stop_reason: 'tool_use',
  };
}

describe('docker-compose up (deployments/compose, locally built images, loopback topology)', () => {
  let model: ScriptedModelServer;
  let env: NodeJS.ProcessEnv;
  let socketDir: string;
  let base: string;
  let apiKey: string;
  let environmentId: string;
  const timings: Record<string, number> = {};
  const files = [
    '-p',
    PROJECT,
    '-f',
    join(COMPOSE_DIR, 'compose.yaml'),
    '-f',
    join(COMPOSE_DIR, 'compose.loopback.yaml'),
  ];
  const compose = (args: string[], timeoutMs = 300_000, extra: NodeJS.ProcessEnv = {}) =>
    sh('docker-compose', [...files, ...args], { ...env, ...extra }, timeoutMs);
  async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  /** The documented key command: `docker-compose run --rm migrate mango api-key create …` (JSON output). */
  async function createKey(extra: string[]): Promise<{ id: string; api_key: string }> {
    const out = await compose([
      'run',
      '--rm',
      '-T',
      'migrate',
      'mango',
      'api-key',
      'create',
      '-workspace',
      'wrkspc_default',
      ...extra,
      '--json',
    ]);
    return JSON.parse(out.trim().split('\n').at(-1)!);
  }

  beforeAll(async () => {
    model = await startScriptedModel();
    model.script(...Array.from({ length: 20 }, () => agentReply));
    const t0 = Date.now();
    const images = Object.fromEntries(
      (await sh('bash', [join(ROOT, 'tools/docker/compose-images.sh')], process.env, 1_500_000))
        .split('\n')
        .filter((l) => /^MANGO_[A-Z0-9_]+=\S+$/.test(l))
        .map((l) => l.split('=', 2) as [string, string]),
    );
    timings.images = Date.now() - t0;
    const names = Object.keys(images).sort().join(',');
    if (
      names !==
      'MANGO_IMAGE,MANGO_NGINX_IMAGE,MANGO_POSTGRES_IMAGE,MANGO_S3_IMAGE,MANGO_SANDBOX_IMAGE,MANGO_TEMPORAL_ADMIN_IMAGE,MANGO_TEMPORAL_IMAGE'
    )
      throw new Error(`compose-images.sh printed ${names || 'no image variables'}`);
    const port = await freePort();
    socketDir = mkdtempSync('/tmp/mcs-');
    // The supervisor runs as the control-plane image's uid (10001) and creates the Work API sockets here.
    chownSync(socketDir, 10001, 10001);
    base = `http://127.0.0.1:${port}`;
    const dockerSocket = (process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DOCKER_HOST: process.env.DOCKER_HOST,
      ...images,
      MANGO_PORT: String(port),
      MANGO_PUBLIC_BASE_URL: base,
      MANGO_COMPOSE_PG_PORT: String(await freePort()),
      MANGO_COMPOSE_TEMPORAL_PORT: String(await freePort()),
      MANGO_COMPOSE_S3_PORT: String(await freePort()),
      MANGO_COMPOSE_API_PORT: String(await freePort()),
      MANGO_COMPOSE_FILES_PORT: String(await freePort()),
      MANGO_COMPOSE_ORCHESTRATOR_METRICS_PORT: String(await freePort()),
      // Temporal's server: its four services' gRPC and membership ports and the frontend's HTTP port.
      ...Object.fromEntries(
        await Promise.all(
          [
            'HTTP',
            'FRONTEND_MEMBERSHIP',
            'HISTORY',
            'HISTORY_MEMBERSHIP',
            'MATCHING',
            'MATCHING_MEMBERSHIP',
            'WORKER',
            'WORKER_MEMBERSHIP',
          ].map(async (p) => [
            `MANGO_COMPOSE_TEMPORAL_${p}_PORT`,
            String(await (p.endsWith('MEMBERSHIP') ? freeLowPort() : freePort())),
          ]),
        ),
      ),
      MANGO_COMPOSE_SUPERVISOR_METRICS_PORT: String(await freePort()),
      MANGO_MODEL_BASE_URL: model.url,
      MANGO_DOCKER_SOCKET: dockerSocket,
      MANGO_DOCKER_GID: String(statSync(dockerSocket).gid),
      MANGO_WORKER_SOCKET_DIR: socketDir,
      // The secrets compose.yaml requires, generated for this run.
      MANGO_DB_PASSWORD: randomBytes(18).toString('base64url'),
      MANGO_S3_ACCESS_KEY: `ak${randomBytes(8).toString('hex')}`,
      MANGO_S3_SECRET_KEY: randomBytes(24).toString('base64url'),
    };
  }, 1_600_000);

  afterAll(async () => {
    if (env) {
      const logs = await compose(['--profile', 'supervisor', 'logs', '--no-color', '--tail', '60']).catch(
        (e) => String(e),
      );
      if (process.env.MANGO_COMPOSE_TEST_LOGS) process.stdout.write(logs);
      await compose(['--profile', 'supervisor', 'down', '-v', '--remove-orphans', '-t', '5'], 300_000).catch(
        (e) => process.stderr.write(`compose down failed: ${e}\n`),
      );
      // The supervisor's sandboxes are not Compose services: remove this Environment's containers and volumes.
      if (environmentId) {
        const label = `label=dev.mango.environment_id=${environmentId}`;
        const ids = (await sh('docker', ['ps', '-aq', '--filter', label], env, 60_000))
          .split('\n')
          .filter(Boolean);
        if (ids.length) await sh('docker', ['rm', '-f', '-v', ...ids], env, 120_000).catch(() => undefined);
        const vols = (await sh('docker', ['volume', 'ls', '-q', '--filter', label], env, 60_000))
          .split('\n')
          .filter(Boolean);
        if (vols.length)
          await sh('docker', ['volume', 'rm', '-f', ...vols], env, 60_000).catch(() => undefined);
      }
    }
    if (socketDir) rmSync(socketDir, { recursive: true, force: true });
    await model?.close();
    process.stdout.write(`compose test timings (ms): ${JSON.stringify(timings)}\n`);
  }, 600_000);

  it('comes up: the migrate service exits 0 and the ingress answers /readyz', async () => {
    const t0 = Date.now();
    await compose(['up', '-d'], 600_000);
    const migrateId = (await compose(['ps', '-a', '-q', 'migrate'])).trim();
    expect(migrateId).not.toBe('');
    expect(
      (await sh('docker', ['inspect', '-f', '{{.State.ExitCode}}', migrateId], env, 60_000)).trim(),
    ).toBe('0');
    expect(await compose(['logs', '--no-color', 'migrate'])).toMatch(/applied \d+ migration\(s\)|up to date/);
    await until(
      async () => ((await fetch(`${base}/readyz`)).status === 200 ? true : undefined),
      180_000,
      'the ingress /readyz',
    );
    // `up` returned after every dependency was healthy; every long-running service reports healthy.
    const health: Record<string, string> = {};
    for (const service of [
      'postgres',
      'temporal',
      's3',
      'api',
      'files',
      'orchestrator',
      'ingress-loopback',
    ]) {
      const id = (await compose(['ps', '-q', service])).trim();
      health[service] = await until(
        async () => {
          const h = (
            await sh('docker', ['inspect', '-f', '{{.State.Health.Status}}', id], env, 60_000)
          ).trim();
          return h === 'healthy' ? h : undefined;
        },
        180_000,
        `${service} healthy`,
      );
    }
    expect(Object.values(health).every((h) => h === 'healthy')).toBe(true);
    timings.up = Date.now() - t0;
  }, 900_000);

  it('issues keys with `run --rm migrate mango api-key create`, starts the supervisor profile and runs a healthcheck to succeeded', async () => {
    const t0 = Date.now();
    apiKey = (await createKey(['-label', 'ops'])).api_key;
    expect(apiKey).toMatch(/^mango_ak_/);
    const e = await api('POST', '/v1/environments', { name: `compose-${process.pid}` });
    expect(e.status).toBe(201);
    environmentId = e.body.id;
    const envKey = (await createKey(['-environment', environmentId, '-label', 'docker-pool'])).api_key;
    expect(envKey).toMatch(/^mango_ek_/);
    await compose(['--profile', 'supervisor', 'up', '-d', 'supervisor'], 300_000, {
      MANGO_ENVIRONMENT_ID: environmentId,
      MANGO_ENVIRONMENT_KEY: envKey,
    });
    // The supervisor runs from the control-plane image as its non-root user, read-only.
    const supervisorId = (
      await compose(['--profile', 'supervisor', 'ps', '-q', 'supervisor'], 60_000, {
        MANGO_ENVIRONMENT_ID: environmentId,
        MANGO_ENVIRONMENT_KEY: envKey,
      })
    ).trim();
    expect(
      (
        await sh(
          'docker',
          [
            'inspect',
            '-f',
            '{{.Config.Image}} {{.Config.User}} {{.HostConfig.ReadonlyRootfs}}',
            supervisorId,
          ],
          env,
          60_000,
        )
      ).trim(),
    ).toBe(`${env.MANGO_IMAGE} 10001:10001 true`);
    env.MANGO_ENVIRONMENT_ID = environmentId;
    env.MANGO_ENVIRONMENT_KEY = envKey;
    const w = await api('POST', `/v1/environments/${environmentId}/work`, { data: { type: 'healthcheck' } });
    expect(w.status).toBe(201);
    const result = await until(
      async () =>
        (await api('GET', `/v1/environments/${environmentId}/work/${w.body.id}`)).body.result ?? undefined,
      180_000,
      'the healthcheck result',
    );
    expect(result.status).toBe('succeeded');
    timings.healthcheck = Date.now() - t0;
  }, 600_000);

  it('runs a scripted-model turn whose bash call runs in the sandbox and returns its real output', async () => {
    const t0 = Date.now();
    const agent = await api('POST', '/v1/agents', {
      name: 'compose-coder',
      model: 'claude-sonnet-4-6',
      tools: [{ type: 'agent_toolset_20260401' }],
    });
    expect(agent.status).toBe(201);
    const session = await api('POST', '/v1/sessions', {
      agent: agent.body.id,
      environment_id: environmentId,
      initial_events: [
        {
          type: 'user.message',
          content: [
            {
              type: 'text',
              text: 'Run this in bash: echo "sum=$((6*7))" && id -un && cat /etc/debian_version',
            },
          ],
        },
      ],
    });
    expect(session.status).toBe(201);
    const events = await until(
      async () => {
        const r = await api('GET', `/v1/sessions/${session.body.id}/events?limit=1000`);
        const data = r.body.data as Array<{ type: string; [k: string]: any }>;
        return data.some((e) => e.type === 'session.status_idle') ? data : undefined;
      },
      240_000,
      'the turn to end',
    );
    const types = events.map((e) => e.type);
    expect(types).toContain('agent.tool_use');
    const result = events.find((e) => e.type === 'user.tool_result');
    expect(result).toBeDefined();
    const text = JSON.stringify(result!.content);
    // Computed in the sandbox (the command says `$((6*7))`, never `42`), as its `mango` user, on Debian 12.
    expect(text).toContain('sum=42');
    expect(text).toContain('mango');
    expect(text).toMatch(/12\.\d+/);
    expect(result!.is_error ?? false).toBe(false);
    // The sandbox ran from the sandbox image: the supervisor took the item runner the image declares.
    const logs = await compose(['--profile', 'supervisor', 'logs', '--no-color', 'supervisor']);
    expect(logs).toContain('the worker image provides a precompiled item runner');
    expect(logs).toContain('"entry":"/opt/mango/dist/item-runner/current/item-runner.js"');
    // The Session's workflow lives in Temporal's server on the stack's PostgreSQL (database `temporal`).
    const pgId = (await compose(['ps', '-q', 'postgres'])).trim();
    const executions = await sh(
      'docker',
      [
        'exec',
        '-e',
        `PGPASSWORD=${env.MANGO_DB_PASSWORD}`,
        pgId,
        'psql',
        '-h',
        '127.0.0.1',
        '-p',
        env.MANGO_COMPOSE_PG_PORT!,
        '-U',
        'mango',
        '-d',
        'temporal',
        '-Atc',
        'select count(*) from executions',
      ],
      env,
      60_000,
    );
    expect(Number(executions.trim())).toBeGreaterThan(0);
    // The orchestrator in the Compose stack reached the scripted model on the host's loopback.
    expect(model.requests.length).toBeGreaterThanOrEqual(2);
    timings.turn = Date.now() - t0;
  }, 600_000);
});
