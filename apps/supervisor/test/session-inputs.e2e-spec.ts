import {
  AppProcess,
  dropBucket,
  freshBucketEnv,
  httpClient,
  startFilesApp,
  startIngress,
} from '@mango/testing';
import { lastResult, Stack, startStack, toolCall } from './support';

/**
 * Skills and Memory on the worker (docs/api-guide.md, Skills; Memory on the worker), end to end through one ingress (apps/api + apps/files):
 * the Session's frozen Skill is staged into the sandbox before any tool runs, an attached read_write
 * Memory Store is mounted at /mnt/memory/<name> and a file the model writes there is pushed back by the
 * activation's final sync — before the final Stop, in a real hardened container.
 */
describe('Skills and Memory in a real Session container (ingress, apps/api, apps/files, orchestrator, dockerd)', () => {
  let stack: Stack;
  let files: AppProcess;
  let ingress: Awaited<ReturnType<typeof startIngress>>;
  let key: string;
  const s3 = freshBucketEnv('sessinputs');

  beforeAll(async () => {
    stack = await startStack('sessinputs');
    const started = await startFilesApp(stack.api.db.url, s3);
    files = started.app;
    const filesUrl = started.url;
    ingress = await startIngress({ apiUrl: stack.api.url, filesUrl });
    key = (await stack.api.issueKey('wrkspc_default')).api_key;
    await stack.startSupervisor({ MANGO_BASE_URL: ingress.url });
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await ingress?.close();
    await files?.stop();
    await dropBucket(s3);
  });

  it('stages the pinned Skill, mounts the Memory Store, and pushes what the model wrote there', async () => {
    const http = httpClient(ingress.url, key);
    const form = new FormData();
    const skillMd = '---\nname: notes\ndescription: How to take notes.\n---\n# Notes\nWrite short notes.\n';
    form.append('files[]', new Blob([skillMd]), 'notes/SKILL.md');
    const skill = await fetch(`${ingress.url}/v1/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id: string } }));
    expect(skill.status).toBe(201);
    const store = (await http.post('/v1/memory_stores', { name: 'team notes' })).body;
    await http.post(`/v1/memory_stores/${store.id}/memories`, {
      path: '/prefs.md',
      content: 'Prefers tabs.\n',
    });
    const agent = (
      await http.post('/v1/agents', {
        name: `reader-${Date.now()}`,
        model: 'm',
        tools: [{ type: 'agent_toolset_20260401' }],
        skills: [{ type: 'custom', skill_id: skill.body.id }],
      })
    ).body.id;

    const results: Array<{ text: string; is_error: boolean }> = [];
    const step = (next: ReturnType<typeof toolCall> | { content: any[] }) => (body: any) => {
      results.push(lastResult(body));
      return next;
    };
    stack.model.script(
      toolCall('toolu_1', 'read', { file_path: '/workspace/skills/notes/SKILL.md' }),
      step(toolCall('toolu_2', 'read', { file_path: '/mnt/memory/team-notes/prefs.md' })),
      step(
        toolCall('toolu_3', 'write', {
          file_path: '/mnt/memory/team-notes/today.md',
          content: 'Shipped it.\n',
        }),
      ),
      step({ content: [{ type: 'text', text: 'Noted.' }] }),
    );
    const s = (
      await http.post('/v1/sessions', {
        agent,
        environment_id: stack.envId,
        resources: [{ type: 'memory_store', memory_store_id: store.id, access: 'read_write' }],
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'take notes' }] }],
      })
    ).body;
    expect(s.resources[0]).toMatchObject({ mount_path: '/mnt/memory/team-notes' });

    await stack.until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    await stack.untilWork(s.id, (w) => w.length === 1 && w[0].state === 'stopped');
    expect(results[0]).toEqual({ text: expect.stringContaining('Write short notes.'), is_error: false });
    expect(results[1]).toEqual({ text: expect.stringContaining('Prefers tabs.'), is_error: false });
    expect(results[2]!.is_error).toBe(false);
    // The activation's final sync pushed the new file before the Work stopped.
    const memories = (await http.get(`/v1/memory_stores/${store.id}/memories`)).body.data as Array<{
      id: string;
      path: string;
    }>;
    expect(memories.map((m) => m.path).sort()).toEqual(['/prefs.md', '/today.md']);
    const today = (
      await http.get(
        `/v1/memory_stores/${store.id}/memories/${memories.find((m) => m.path === '/today.md')!.id}`,
      )
    ).body;
    expect(today.content).toBe('Shipped it.\n');
  }, 180_000);
});
