import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { newId } from '@mango/platform-ids';
import { AppProcess } from '@mango/testing';
import { ROOT, Stack, startStack, toolCall } from './support';

const run = promisify(execFile);

/**
 * Session workspace garbage collection (ADR 0013) on the real dockerd: a Session deleted while its
 * activation runs loses its volume as soon as the container is gone; a Session deleted while nothing ran
 * is an orphan that `mango-worker volumes list` shows and `prune --apply` removes (dry run by default),
 * volume or --workspace-root directory alike, never a live Session's or another Environment's.
 */
describe('Session workspace GC: removal on deletion and `mango-worker volumes list|prune` (real dockerd)', () => {
  let stack: Stack;
  let supervisor: AppProcess;
  let root: string;
  let key: string;
  const foreignSession = newId('session');
  const foreign = `mango-session-${foreignSession.toLowerCase()}`;

  beforeAll(async () => {
    stack = await startStack('wsgc');
    root = mkdtempSync(join(tmpdir(), 'mango-wsgc-'));
    key = (await stack.api.issueKey('wrkspc_default')).api_key;
    // A long idle countdown: the activation is still there when its Session is deleted.
    supervisor = await stack.startSupervisor({ MANGO_SESSION_IDLE_MS: '10000' });
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await stack?.docker
      .getVolume(foreign)
      .remove()
      .catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  const volumeExists = (id: string) =>
    stack.docker
      .getVolume(`mango-session-${id.toLowerCase()}`)
      .inspect()
      .then(
        (v) => v,
        () => undefined,
      );
  const turn = async (name: string) => {
    stack.model.script(toolCall(`toolu_${name}`, 'bash', { command: 'echo x > kept.txt' }), {
      content: [{ type: 'text', text: 'ok' }],
    });
    const s = (
      await stack.ws.post('/v1/sessions', {
        agent: await stack.agent(name),
        environment_id: stack.envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }],
      })
    ).body;
    await stack.until(s.id, (l) => l.some((e) => e.type === 'session.status_idle'));
    return s.id as string;
  };
  const volumes = async (...args: string[]) =>
    (
      await run(process.execPath, [join(ROOT, 'tools/cli/bin/mango-worker.js'), 'volumes', ...args], {
        env: {
          ...process.env,
          MANGO_BASE_URL: stack.api.url,
          MANGO_API_KEY: key,
          MANGO_ENVIRONMENT_ID: stack.envId,
          MANGO_WORKER_WORKSPACE_ROOT: root,
        },
      })
    ).stdout;

  it('a Session deleted during its activation: the supervisor removes its volume after the container', async () => {
    const id = await turn('deleted-live');
    const volume = await volumeExists(id);
    expect(volume?.Labels).toMatchObject({
      'dev.mango.session_id': id,
      'dev.mango.environment_id': stack.envId,
    });
    // The activation is still in its idle countdown.
    expect((await stack.workOf(id)).map((w) => w.state)).not.toEqual(['stopped']);
    expect((await stack.ws.delete(`/v1/sessions/${id}`)).status).toBe(200);
    for (let i = 0; i < 600 && (await volumeExists(id)); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await volumeExists(id)).toBeUndefined();
    expect(supervisor.logs()).toContain('Session deleted: workspace removed');
  }, 180_000);

  it('an orphan (deleted with no activation) is listed, kept by the dry run and removed by prune --apply; live and foreign ones stay', async () => {
    const live = await turn('kept');
    const gone = await turn('orphaned');
    // Both activations end after their idle countdown; only then is `gone` deleted: nothing runs for it.
    await stack.untilWork(gone, (w) => w.length === 1 && w[0].state === 'stopped', 120_000);
    await stack.untilWork(live, (w) => w.length === 1 && w[0].state === 'stopped', 120_000);
    for (let i = 0; i < 200 && (await volumes('list')).includes('in_use'); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect((await stack.ws.delete(`/v1/sessions/${gone}`)).status).toBe(200);
    // Another Environment's volume and an orphaned --workspace-root directory.
    await stack.docker.createVolume({
      Name: foreign,
      Labels: { 'dev.mango.environment_id': newId('environment'), 'dev.mango.session_id': foreignSession },
    });
    const orphanDir = join(root, newId('session'));
    mkdirSync(orphanDir);
    mkdirSync(join(root, 'not-a-session'));

    const listed = await volumes('list');
    const line = (s: string) => listed.split('\n').find((l) => l.includes(s));
    expect(line(`mango-session-${live.toLowerCase()}`)).toMatch(/^live\tvolume\t/);
    expect(line(`mango-session-${gone.toLowerCase()}`)).toMatch(/^orphan\tvolume\t/);
    expect(line(foreign)).toMatch(/^other_environment\tvolume\t/);
    expect(line(orphanDir)).toMatch(/^orphan\tdirectory\t/);
    expect(listed).not.toContain('not-a-session');

    const dry = await volumes('prune');
    expect(dry).toMatch(/orphaned workspaces would be removed \(dry run; pass --apply to remove them\)/);
    expect(await volumeExists(gone)).toBeDefined();
    expect(existsSync(orphanDir)).toBe(true);

    const applied = await volumes('prune', '--apply');
    expect(applied.split('\n').filter((l) => l.endsWith('\tremoved')).length).toBeGreaterThanOrEqual(2);
    expect(await volumeExists(gone)).toBeUndefined();
    expect(existsSync(orphanDir)).toBe(false);
    expect(await volumeExists(live)).toBeDefined();
    expect(await stack.docker.getVolume(foreign).inspect()).toMatchObject({ Name: foreign });
    expect(existsSync(join(root, 'not-a-session'))).toBe(true);
  }, 300_000);

  it('refuses to run without a key that sees the Environment', async () => {
    await expect(
      run(process.execPath, [join(ROOT, 'tools/cli/bin/mango-worker.js'), 'volumes', 'list'], {
        env: {
          ...process.env,
          MANGO_BASE_URL: stack.api.url,
          MANGO_API_KEY: 'mango_ak_wrong',
          MANGO_ENVIRONMENT_ID: stack.envId,
        },
      }),
    ).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining(`cannot read Environment ${stack.envId}`),
    });
  });
});
