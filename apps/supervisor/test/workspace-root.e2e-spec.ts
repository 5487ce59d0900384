import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess } from '@mango/testing';
import { lastResult, Stack, startStack, toolCall } from './support';

/**
 * `mango-worker docker --workspace-root DIR` (docs/operator-guide.md "`--workspace-root`": the operator stages
 * File and Git inputs in the worker workspace): a Session's workspace is the host directory DIR/<session id>, bind-mounted at
 * /workspace, instead of a named volume. What the operator staged is there for the tools, what the tools
 * write lands on the host, a missing directory is created for the sandbox user (uid 1000, mode 0700), and a
 * symlink in the Session's place is refused.
 */
describe('--workspace-root: Session workspaces as host directories (real dockerd)', () => {
  let stack: Stack;
  let supervisor: AppProcess;
  let root: string;
  let outside: string;

  beforeAll(async () => {
    stack = await startStack('wsroot');
    root = mkdtempSync(join(tmpdir(), 'mango-wsroot-'));
    outside = mkdtempSync(join(tmpdir(), 'mango-wsroot-outside-'));
    supervisor = await stack.startSupervisor({ MANGO_WORKER_WORKSPACE_ROOT: root });
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  const createIdle = async (agent: string) =>
    (await stack.ws.post('/v1/sessions', { agent, environment_id: stack.envId })).body.id as string;
  const say = (id: string, text: string) =>
    stack.ws.post(`/v1/sessions/${id}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text }] }],
    });

  it('the tools see what the operator staged in DIR/<session id>, and what they write lands there', async () => {
    const results: Array<{ text: string; is_error: boolean }> = [];
    stack.model.script(
      toolCall('toolu_s1', 'bash', { command: 'pwd; id -u; cat inputs/brief.txt; echo done > result.txt' }),
      (body: any) => {
        results.push(lastResult(body));
        return { content: [{ type: 'text', text: 'ok' }] };
      },
    );
    const agent = await stack.agent('staged');
    const id = await createIdle(agent);
    // The operator stages an input before the first turn, owned by the sandbox user.
    const dir = join(root, id);
    mkdirSync(join(dir, 'inputs'), { recursive: true });
    writeFileSync(join(dir, 'inputs/brief.txt'), 'staged by the operator\n');
    for (const p of [dir, join(dir, 'inputs'), join(dir, 'inputs/brief.txt')]) chownSync(p, 1000, 1000);
    chmodSync(dir, 0o700);
    await say(id, 'read the brief');
    await stack.until(id, (l) => l.some((e) => e.type === 'session.status_idle'));
    expect(results).toEqual([{ text: '/workspace\n1000\nstaged by the operator', is_error: false }]);
    expect(readFileSync(join(dir, 'result.txt'), 'utf8')).toBe('done\n');
    expect(lstatSync(join(dir, 'result.txt')).uid).toBe(1000);
    // No named volume was made for this Session.
    await expect(stack.docker.getVolume(`mango-session-${id.toLowerCase()}`).inspect()).rejects.toMatchObject(
      { statusCode: 404 },
    );
  }, 180_000);

  it('a Session without a staged directory gets one: created for uid 1000 with mode 0700, reused by the next activation', async () => {
    const results: Array<{ text: string; is_error: boolean }> = [];
    const step = (next: any) => (body: any) => {
      results.push(lastResult(body));
      return next;
    };
    stack.model.script(
      toolCall('toolu_n1', 'bash', { command: 'echo kept > notes.txt && echo written' }),
      step({ content: [{ type: 'text', text: 'ok' }] }),
    );
    const agent = await stack.agent('fresh');
    const id = await createIdle(agent);
    expect(readdirSync(root)).not.toContain(id);
    await say(id, 'write a note');
    await stack.until(id, (l) => l.some((e) => e.type === 'session.status_idle'));
    await stack.untilWork(id, (w) => w.length === 1 && w[0].state === 'stopped');
    const st = lstatSync(join(root, id));
    expect({ dir: st.isDirectory(), uid: st.uid, gid: st.gid, mode: st.mode & 0o777 }).toEqual({
      dir: true,
      uid: 1000,
      gid: 1000,
      mode: 0o700,
    });
    stack.model.script(
      toolCall('toolu_n2', 'bash', { command: 'cat notes.txt' }),
      step({ content: [{ type: 'text', text: 'ok' }] }),
    );
    await say(id, 'read the note');
    await stack.until(id, (l) => l.filter((e) => e.type === 'session.status_idle').length >= 2);
    expect(results).toEqual([
      { text: 'written', is_error: false },
      { text: 'kept', is_error: false },
    ]);
  }, 180_000);

  it('refuses a symlink in the Session directory place: nothing is mounted or written through it', async () => {
    const agent = await stack.agent('linked');
    const id = await createIdle(agent);
    symlinkSync(outside, join(root, id));
    stack.model.script(toolCall('toolu_l1', 'bash', { command: 'echo escaped > /workspace/escaped.txt' }));
    await say(id, 'try it');
    for (let i = 0; i < 600 && !supervisor.logs().includes('refusing to mount it'); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(supervisor.logs()).toContain(
      `the Session workspace ${join(root, id)} exists and is not a directory; refusing to mount it`,
    );
    expect(readdirSync(outside)).toEqual([]);
  }, 120_000);
});
