import { join } from 'node:path';
import Docker from 'dockerode';
import { AppProcess, httpClient, HttpClient, logged, startApi, ApiUnderTest, startApp } from '@mango/testing';

const ROOT = join(__dirname, '../../..');
const WORK = 'dev.mango.work_id';
const POOL = 'dev.mango.pool';

/**
 * The warm pool through the real API and `mango-worker docker` on the real dockerd (docs/operator-guide.md
 * "Warm pool"): healthcheck Work served by a pre-started container, which is then removed and replaced;
 * and a supervisor's leftover pool removed when the same supervisor id starts again.
 */
describe('warm pool through the Docker supervisor (real API, real dockerd)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let envId: string;
  let supervisorId: string;
  let start: () => Promise<AppProcess>;
  let supervisor: AppProcess | undefined;
  const docker = new Docker({ socketPath: new URL(process.env.DOCKER_HOST!).pathname });
  const pool = () =>
    docker.listContainers({
      all: true,
      filters: { label: [`dev.mango.supervisor=${supervisorId}`, POOL] },
    });
  async function untilPool(predicate: (ids: string[]) => boolean): Promise<string[]> {
    let ids: string[] = [];
    for (let i = 0; i < 600; i++) {
      ids = (await pool()).filter((c) => c.State === 'running').map((c) => c.Id);
      if (predicate(ids) && supervisor?.logs().includes('warm pool on')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return ids;
  }

  beforeAll(async () => {
    api = await startApi('supervisor-pool');
    ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
    envId = (await ws.post('/v1/environments', { name: 'docker-warm-pool' })).body.id;
    supervisorId = `test-${envId.toLowerCase()}`;
    const envKey = (await api.issueKey('wrkspc_default', envId)).api_key;
    start = () =>
      startApp(
        'apps/supervisor/src/main.ts',
        {
          MANGO_ENVIRONMENT_KEY: envKey,
          MANGO_ENVIRONMENT_ID: envId,
          MANGO_BASE_URL: api.url,
          DOCKER_HOST: process.env.DOCKER_HOST!,
          MANGO_WORKER_IMAGE: process.env.MANGO_BASE_IMAGE!,
          MANGO_WORKER_SOURCE_DIR: ROOT,
          MANGO_SUPERVISOR_ID: supervisorId,
          MANGO_WORKER_POOL_SIZE: '1',
        },
        logged('docker engine connected'),
      );
    supervisor = await start();
  }, 120_000);

  afterAll(async () => {
    await supervisor?.stop();
    for (const c of await pool())
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => undefined);
    await api.close();
  });

  async function until(id: string, predicate: (w: any) => boolean, ms = 45_000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const w = (await ws.get(`/v1/environments/${envId}/work/${id}`)).body;
      if (predicate(w) || Date.now() > deadline) return w;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('a healthcheck is served end to end by the pooled container, which is then removed and replaced', async () => {
    const [slot] = await untilPool((ids) => ids.length === 1);
    expect(slot).toBeDefined();
    // Wait until its runner is loaded (the supervisor only hands out a ready one).
    for (
      let i = 0;
      i < 600 && !(await docker.getContainer(slot!).logs({ stdout: true })).includes('waiting');
      i++
    )
      await new Promise((r) => setTimeout(r, 100));
    const created: string[] = [];
    const events = (await docker.getEvents({
      filters: { type: ['container'], event: ['create'], label: [WORK] },
    })) as NodeJS.ReadableStream & { destroy(): void };
    // This Environment's containers only: other suites on the same dockerd make Work containers too.
    events.on('data', (c: Buffer) => {
      for (const line of c.toString().split('\n').filter(Boolean))
        if (JSON.parse(line).Actor?.Attributes?.['dev.mango.environment_id'] === envId) created.push(line);
    });
    const work = (await ws.post(`/v1/environments/${envId}/work`, { data: { type: 'healthcheck' } })).body;
    const done = await until(work.id, (w) => w.state === 'stopped');
    events.destroy();
    expect(done).toMatchObject({
      state: 'stopped',
      result: { status: 'succeeded', message: 'Sandbox process and workspace check passed' },
    });
    expect(created).toEqual([]); // no cold container was made for it
    for (let i = 0; i < 100 && !supervisor!.logs().includes('item container finished and was removed'); i++)
      await new Promise((r) => setTimeout(r, 100));
    // Served once: the pooled container is removed and a fresh one takes its place.
    const next = await untilPool((ids) => ids.length === 1 && !ids.includes(slot!));
    expect(next).toHaveLength(1);
    expect(next).not.toContain(slot);
    await expect(docker.getContainer(slot!).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect(supervisor!.logs()).toMatch(/item container finished and was removed/);
    expect(supervisor!.logs()).not.toMatch(/mango_wt_[A-Za-z0-9_-]{20}/);
  }, 120_000);

  it('a killed supervisor leaves its pool; the next start of the same supervisor id removes it', async () => {
    const [left] = await untilPool((ids) => ids.length === 1);
    await supervisor!.stop('SIGKILL');
    // Left behind: still there (its runner may already have exited on its stdin's end, a race with the
    // kill that one CI run lost when this asserted State.Running), until a start removes it.
    expect((await docker.getContainer(left!).inspect()).Id).toBe(left);
    supervisor = await start();
    for (let i = 0; i < 300 && !supervisor.logs().includes('removed warm-pool containers'); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(supervisor.logs()).toContain('removed warm-pool containers left by an earlier run');
    await expect(docker.getContainer(left!).inspect()).rejects.toMatchObject({ statusCode: 404 });
    // Not mistaken for a Work container of the earlier run: nothing to reclaim was reported for it.
    expect(supervisor.logs()).not.toContain('removed containers left by an earlier run');
    // Graceful shutdown removes the new pool.
    await untilPool((ids) => ids.length === 1);
    await supervisor.stop();
    supervisor = undefined;
    expect(await pool()).toEqual([]);
  }, 180_000);
});
