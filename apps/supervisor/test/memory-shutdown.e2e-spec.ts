import {
  AppProcess,
  dropBucket,
  freshBucketEnv,
  httpClient,
  startFilesApp,
  startIngress,
} from '@mango/testing';
import { Stack, startStack, toolCall, watchContainers, WORK_LABEL } from './support';

/**
 * Shutdown and replacement with Memory (docs/api-guide.md, Memory on the worker): the supervisor is stopped while an item's final Memory
 * sync is in flight, and that write is held at the ingress for 20 s — longer than the 8 s lease the item
 * asks for. The item keeps renewing its lease through teardown, so the held write still commits under the
 * live lease; then the Work stops, the container (and its /mnt/memory tmpfs) is removed, and the
 * supervisor exits 0 — no hard kill.
 */
describe('Memory on the worker: a Memory write delayed beyond 15 s during supervisor shutdown (real dockerd)', () => {
  let stack: Stack;
  let files: AppProcess;
  let ingress: Awaited<ReturnType<typeof startIngress>>;
  let watcher: Awaited<ReturnType<typeof watchContainers>>;
  const HOLD_MS = 20_000;
  let heldAt = 0;
  let released = 0;
  let onHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  const s3 = freshBucketEnv('memshutdown');

  beforeAll(async () => {
    stack = await startStack('memshutdown');
    watcher = await watchContainers(stack.docker);
    const started = await startFilesApp(stack.api.db.url, s3);
    files = started.app;
    const filesUrl = started.url;
    ingress = await startIngress({
      apiUrl: stack.api.url,
      filesUrl,
      // Hold the first Memory write that comes from the worker (the final sync's push).
      beforeForward: (method, url) => {
        if (heldAt || method !== 'POST' || !/^\/v1\/memory_stores\/[^/]+\/memories/.test(url)) return;
        heldAt = Date.now();
        onHeld();
        return new Promise((r) => setTimeout(() => ((released = Date.now()), r()), HOLD_MS));
      },
    });
  }, 180_000);

  afterAll(async () => {
    watcher?.close();
    await stack?.close();
    await ingress?.close();
    await files?.stop();
    await dropBucket(s3);
  });

  it('the held write is renewed, persisted and cleaned up before the supervisor exits', async () => {
    const key = (await stack.api.issueKey('wrkspc_default')).api_key;
    const http = httpClient(ingress.url, key);
    const store = (await http.post('/v1/memory_stores', { name: 'notes' })).body;
    const agent = await stack.agent('memo');
    stack.model.script(
      toolCall('toolu_m1', 'write', {
        file_path: '/mnt/memory/notes/late.md',
        content: 'written before shutdown\n',
      }),
      { content: [{ type: 'text', text: 'Saved.' }] },
    );
    const supervisor = await stack.startSupervisor({
      MANGO_BASE_URL: ingress.url,
      MANGO_SUPERVISOR_ID: 'memshutdown-a',
      MANGO_WORK_TTL_SECONDS: '8',
    });
    const s = (
      await http.post('/v1/sessions', {
        agent,
        environment_id: stack.envId,
        resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_write' }],
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'remember this' }] }],
      })
    ).body;

    // The turn ends, the activation tears down, and its final sync's write is held at the ingress.
    await held;
    const [work] = await stack.workOf(s.id);
    expect(work.state).not.toBe('stopped');
    const exit = await supervisor.stop('SIGTERM');
    expect(exit).toBe(0);

    // Persisted under the lease the item kept renewing while the write was held (8 s TTL < 20 s hold).
    expect(released).toBeGreaterThan(0);
    const memories = (await http.get(`/v1/memory_stores/${store.id}/memories`)).body.data as Array<{
      id: string;
      path: string;
    }>;
    const late = memories.find((m) => m.path === '/late.md');
    expect(late).toBeDefined();
    expect((await http.get(`/v1/memory_stores/${store.id}/memories/${late!.id}`)).body.content).toBe(
      'written before shutdown\n',
    );
    const [row] = await stack.api.sql<{ state: string; latest_heartbeat_at: Date }>(
      'SELECT state, latest_heartbeat_at FROM work_items WHERE id = $1',
      [work.id],
    );
    expect(row!.state).toBe('stopped');
    expect(new Date(row!.latest_heartbeat_at).getTime() - heldAt).toBeGreaterThanOrEqual(15_000);
    // Cleaned up: the container (with its /mnt/memory tmpfs) is gone, and nothing was hard-killed.
    expect(watcher.seen.filter((e) => e.work === work.id).map((e) => e.action)).toEqual(
      expect.arrayContaining(['create', 'start', 'die', 'destroy']),
    );
    expect(
      (await stack.docker.listContainers({ all: true, filters: { label: [`${WORK_LABEL}=${work.id}`] } }))
        .length,
    ).toBe(0);
    expect(supervisor.logs()).not.toMatch(/killing the remaining items/);
  }, 240_000);
});
