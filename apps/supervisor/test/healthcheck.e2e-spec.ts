import { join } from 'node:path';
import Docker from 'dockerode';
import { decodeWorkSecret } from '@mango/feature-work';
import {
  AppProcess,
  freePort,
  httpClient,
  HttpClient,
  logged,
  scrapeMetrics,
  startApi,
  ApiUnderTest,
  startApp,
} from '@mango/testing';

const ROOT = join(__dirname, '../../..');
const LABEL = 'dev.mango.work_id';

/** The Docker healthcheck path (docs/operator-guide.md, The Docker supervisor): supervisor → claim/Ack → fixed sandbox probe → Result, with cleanup, over real processes. */
describe('healthcheck through the Docker supervisor (real API, real dockerd)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let envId: string;
  let supervisor: AppProcess;
  let metricsUrl: string;
  const docker = new Docker({ socketPath: new URL(process.env.DOCKER_HOST!).pathname });
  const seen = new Map<string, Docker.ContainerInspectInfo>();
  let events: NodeJS.ReadableStream | undefined;

  beforeAll(async () => {
    api = await startApi('supervisor');
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    envId = (await ws.post('/v1/environments', { name: 'docker-pool' })).body.id;
    const envKey = (await api.issueKey('wrkspc_default', envId)).api_key;
    // Inspect every Work container the moment it is created (it is removed right after the activation).
    events = (await docker.getEvents({
      filters: { type: ['container'], event: ['create'], label: [LABEL] },
    })) as NodeJS.ReadableStream;
    events.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const id = JSON.parse(line).id as string;
        docker
          .getContainer(id)
          .inspect()
          .then((info) => seen.set(info.Config.Labels[LABEL]!, info))
          .catch(() => undefined);
      }
    });
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    supervisor = await startApp(
      'apps/supervisor/src/main.ts',
      {
        MANGO_METRICS_PORT: String(metricsPort),
        MANGO_ENVIRONMENT_KEY: envKey,
        MANGO_ENVIRONMENT_ID: envId,
        MANGO_BASE_URL: api.url,
        DOCKER_HOST: process.env.DOCKER_HOST!,
        MANGO_WORKER_IMAGE: process.env.MANGO_BASE_IMAGE!,
        MANGO_WORKER_SOURCE_DIR: ROOT,
        MANGO_SUPERVISOR_ID: `test-${envId.toLowerCase()}`,
        // Today's cold path: one container per item (the warm pool: pool.e2e-spec.ts).
        MANGO_WORKER_POOL_SIZE: '0',
        // Must never reach a sandbox:
        MANGO_MODEL_API_KEY: 'sk-model-secret-must-not-leak',
        MANGO_API_KEY: 'mango_ak_must_not_leak',
      },
      logged('docker engine connected'),
    );
  }, 120_000);

  afterAll(async () => {
    (events as unknown as { destroy?: () => void })?.destroy?.();
    await supervisor?.stop();
    await api.close();
  });

  async function until(id: string, predicate: (w: any) => boolean, ms = 45_000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const w = (await ws.get(`/v1/environments/${envId}/work/${id}`)).body;
      if (predicate(w) || Date.now() > deadline) return w;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('succeeds end to end, then the container and its tmpfs workspace are gone', async () => {
    const created = await ws.post(`/v1/environments/${envId}/work`, { data: { type: 'healthcheck' } });
    const done = await until(created.body.id, (w) => w.state === 'stopped');
    expect(done).toMatchObject({
      state: 'stopped',
      result: { status: 'succeeded', message: 'Sandbox process and workspace check passed' },
    });
    expect(done.acknowledged_at).not.toBeNull();
    expect(done.started_at).not.toBeNull();
    // The Result stops the Work from inside the container; the supervisor removes it right after exit.
    const byWork = { all: true, filters: { label: [`${LABEL}=${created.body.id}`] } };
    let left = await docker.listContainers(byWork);
    for (let i = 0; i < 150 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = await docker.listContainers(byWork);
    }
    expect(left).toEqual([]);
    // The supervisor logs the removal once dockerd has answered it, which can be after the list above.
    for (let i = 0; i < 100 && !supervisor.logs().includes('item container finished and was removed'); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(supervisor.logs()).toMatch(/item container finished and was removed/);
    // Pool size 0: no pooled container was ever made for this supervisor.
    const pool = [`dev.mango.supervisor=test-${envId.toLowerCase()}`, 'dev.mango.pool'];
    expect(await docker.listContainers({ all: true, filters: { label: pool } })).toEqual([]);
    expect(supervisor.logs()).not.toContain('warm pool on');
    // The supervisor's /metrics (checked by promtool) counted the container, and no failure.
    const scrape = await scrapeMetrics(metricsUrl);
    expect(
      scrape.value('mango_container_starts_total', { service: 'supervisor', work_type: 'healthcheck' }),
    ).toBe(1);
    expect(scrape.value('mango_container_failures_total')).toBeUndefined();
  }, 60_000);

  it('the container was hardened and carried no credentials in env, command or labels', async () => {
    const created = await ws.post(`/v1/environments/${envId}/work`, { data: { type: 'healthcheck' } });
    await until(created.body.id, (w) => w.state === 'stopped');
    const info = seen.get(created.body.id)!;
    expect(info).toBeDefined();
    const text = JSON.stringify({
      env: info.Config.Env,
      cmd: info.Config.Cmd,
      labels: info.Config.Labels,
      args: info.Args,
    });
    for (const forbidden of [
      'sk-model-secret',
      'mango_ak_',
      'mango_ek_',
      'mango_wt_',
      'MANGO_MODEL',
      'MANGO_ENVIRONMENT_KEY',
      'sessions_token',
    ]) {
      expect(text).not.toContain(forbidden);
    }
    expect(info.Config.Env).toEqual(
      expect.arrayContaining([
        `MANGO_WORK_ID=${created.body.id}`,
        `MANGO_ENVIRONMENT_ID=${envId}`,
        'MANGO_WORK_TYPE=healthcheck',
        'MANGO_SANDBOX=docker',
      ]),
    );
    expect(info.Config.User).toBe('1000:1000');
    expect(info.HostConfig).toMatchObject({
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      NetworkMode: 'none',
      PidsLimit: 256,
    });
    expect(info.HostConfig.Tmpfs).toHaveProperty('/workspace');
    expect(info.Mounts.filter((m) => m.Type === 'volume')).toEqual([]);
    expect(supervisor.logs()).not.toMatch(/mango_wt_[A-Za-z0-9_-]{20}/);
  }, 60_000);

  it('a check cancelled before any worker ran records cancelled and starts no container', async () => {
    await supervisor.stop('SIGTERM');
    const created = await ws.post(`/v1/environments/${envId}/work`, { data: { type: 'healthcheck' } });
    expect((await ws.post(`/v1/environments/${envId}/work/${created.body.id}/stop`)).status).toBe(204);
    expect((await ws.get(`/v1/environments/${envId}/work/${created.body.id}`)).body.result.status).toBe(
      'cancelled',
    );
    expect(seen.has(created.body.id)).toBe(false);
  });

  it('a check that nobody completes before its deadline is timed_out (deadline moved in the database)', async () => {
    const created = await ws.post(`/v1/environments/${envId}/work`, { data: { type: 'healthcheck' } });
    await api.sql("UPDATE work_items SET expires_at = now() - interval '1 millisecond' WHERE id = $1", [
      created.body.id,
    ]);
    expect((await ws.get(`/v1/environments/${envId}/work/${created.body.id}`)).body.result.status).toBe(
      'timed_out',
    );
    void decodeWorkSecret;
  });

  it('a container that cannot be created counts as a launch_error in the supervisor metrics', async () => {
    const failEnv = (await ws.post('/v1/environments', { name: 'broken-image' })).body.id;
    const failKey = (await api.issueKey('wrkspc_default', failEnv)).api_key;
    const port = await freePort();
    const broken = await startApp(
      'apps/supervisor/src/main.ts',
      {
        MANGO_METRICS_PORT: String(port),
        MANGO_ENVIRONMENT_KEY: failKey,
        MANGO_ENVIRONMENT_ID: failEnv,
        MANGO_BASE_URL: api.url,
        DOCKER_HOST: process.env.DOCKER_HOST!,
        MANGO_WORKER_IMAGE: 'mango-no-such-image:missing',
        MANGO_WORKER_SOURCE_DIR: ROOT,
        MANGO_SUPERVISOR_ID: `test-${failEnv.toLowerCase()}`,
      },
      logged('docker engine connected'),
    );
    try {
      await ws.post(`/v1/environments/${failEnv}/work`, { data: { type: 'healthcheck' } });
      for (let i = 0; i < 300 && !broken.logs().includes('item launch failed'); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(broken.logs()).toContain('item launch failed');
      const scrape = await scrapeMetrics(`http://127.0.0.1:${port}/metrics`);
      expect(scrape.value('mango_container_starts_total', { work_type: 'healthcheck' })).toBe(1);
      expect(
        scrape.value('mango_container_failures_total', { work_type: 'healthcheck', reason: 'launch_error' }),
      ).toBe(1);
    } finally {
      await broken.stop();
    }
  }, 60_000);
});
