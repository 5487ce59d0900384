import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { GRADER_SYSTEM } from '@mango/domain-sessions';
import { startMcpTestServer, startScriptedModel, ScriptedModelServer } from '@mango/testing';

/**
 * The README, walked as a new user walks it: a clean checkout of this tree, `npm run up` under a
 * restrictive umask with the scripted model behind MANGO_MODEL_BASE_URL, the tour's bash block executed
 * verbatim, then the durability and recovery promises the README makes: a Temporal restart while a tool
 * runs, `npm run down && npm run up` keeping the Session, and `npm run up` recovering from an archived or
 * deleted default Environment and from revoked keys — each saying what it did.
 */
const ROOT = join(__dirname, '../../..');
const TOUR_COMMAND = 'git --version && python3 -V && rg --version && echo ok | sed s/ok/fine/';

type Ev = { id: string; type: string; [k: string]: any };

function sh(cwd: string, env: NodeJS.ProcessEnv, script: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-eu', '-c', `umask 077\n${script}`], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else
        reject(new Error(`exit ${code ?? signal} after:\n${script}\n--- output ---\n${out.slice(-20_000)}`));
    });
  });
}

/**
 * docs/api-guide.md "Try it: a coordinator and two delegates": the coordinator sends the researcher a
 * command that writes notes.txt, then the writer one that reads it, then answers with the last report.
 */
function coordinatorReply(body: any) {
  const last = body.messages.at(-1);
  if (Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result'))
    return { content: [{ type: 'text', text: 'Sent.' }] };
  const sent = body.messages
    .filter((m: any) => m.role === 'assistant' && Array.isArray(m.content))
    .flatMap((m: any) => m.content)
    .filter((b: any) => b.type === 'tool_use' && b.name === 'send_to_agent').length;
  const send = (agent: string, message: string) => ({
    content: [
      { type: 'tool_use', id: `toolu_lead_${sent}`, name: 'send_to_agent', input: { agent, message } },
    ],
    stop_reason: 'tool_use',
  });
  if (sent === 0)
    return send('researcher', "Run this in bash: echo 'The sea is salty.' > notes.txt && echo noted");
  if (sent === 1) return send('writer', 'Run this in bash: cat notes.txt');
  const report = (last.content as any[]).map((b: any) => b.text ?? '').join('');
  return { content: [{ type: 'text', text: `Done: ${report.replace(/<\/?message[^>]*>/g, '').trim()}` }] };
}

/**
 * docs/api-guide.md "Try it: a rubric graded to satisfied": the poet's first draft has no title; the
 * grader asks for a revision until the draft it reads starts with one.
 */
function poetReply(body: any) {
  const asked = JSON.stringify(body.messages);
  if (body.system === GRADER_SYSTEM) {
    const revised = asked.includes('Sea Song');
    return {
      content: [
        {
          type: 'text',
          text: JSON.stringify(
            revised
              ? { result: 'satisfied', explanation: 'A title line, then 5-7-5.' }
              : { result: 'needs_revision', explanation: 'Add a title line.' },
          ),
        },
      ],
    };
  }
  const feedback = asked.includes('Add a title line.');
  return {
    content: [
      {
        type: 'text',
        text: feedback
          ? 'Sea Song\nThe grey sea rolls in\nwaves fold over the cold stones\nsalt wind finds the shore'
          : 'The grey sea rolls in\nwaves fold over the cold stones\nsalt wind finds the shore',
      },
    ],
  };
}

/** The scripted model plays the agent of the tour: it runs what the user asks in bash, then reports. */
function agentReply(body: any) {
  if (body.system === 'You coordinate.') return coordinatorReply(body);
  if (
    body.system === 'You write haiku.' ||
    (body.system === GRADER_SYSTEM && JSON.stringify(body).includes('haiku'))
  )
    return poetReply(body);
  const last = body.messages.at(-1);
  const blocks = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
  const result = blocks.find((b: any) => b.type === 'tool_result');
  if (result) {
    const text = typeof result.content === 'string' ? result.content : result.content?.[0]?.text;
    return { content: [{ type: 'text', text: `The sandbox said:\n${text}` }] };
  }
  // A delegate's input is its coordinator's message (`<message from="…">…</message>`).
  const said: string = (blocks.find((b: any) => b.type === 'text')?.text ?? '').replace(
    /^<message from="[^"]*">\n([\s\S]*)\n<\/message>$/,
    '$1',
  );
  // docs/api-guide.md "Try it: your MCP server with a Vault credential": a call of a remote MCP tool.
  const mcp = /Use the (\w+) tool (\w+) to say: (.*)$/s.exec(said);
  if (mcp)
    return {
      content: [
        {
          type: 'tool_use',
          id: `toolu_${Date.now()}`,
          name: `mcp__${mcp[1]}__${mcp[2]}`,
          input: { text: mcp[3] },
        },
      ],
      stop_reason: 'tool_use',
    };
  const asked = /Run this in bash: (.*)$/s.exec(said);
  if (asked)
    return {
      content: [{ type: 'tool_use', id: `toolu_${Date.now()}`, name: 'bash', input: { command: asked[1] } }],
      stop_reason: 'tool_use',
    };
  return { content: [{ type: 'text', text: "You're welcome." }] };
}

describe('the README journey on a clean checkout (npm run up, the tour, down/up, recovery)', () => {
  let model: ScriptedModelServer;
  let tmp: string;
  let checkout: string;
  let env: NodeJS.ProcessEnv;
  let servicesEnv: NodeJS.ProcessEnv;
  let workflowBundle: Promise<string>;
  const run = (script: string, timeoutMs = 600_000) => sh(checkout, env, script, timeoutMs);
  /**
   * `npm run up` again, after the tour's first one: its orchestrator loads the workflow bundle built once
   * from this checkout (MANGO_WORKFLOW_BUNDLE, docs/operator-guide.md) instead of bundling the same sources
   * with webpack at every restart (about 15-20 s of CPU each). The tour's own `npm run up` bundles at start,
   * as a new user's does; what these later ups are about (durability, recovery) does not depend on it.
   */
  const upAgain = async (extra: NodeJS.ProcessEnv = {}) =>
    sh(checkout, { ...env, ...extra, MANGO_WORKFLOW_BUNDLE: await workflowBundle }, 'npm run up', 600_000);
  const local = () =>
    Object.fromEntries(
      readFileSync(join(checkout, '.mango/local.env'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    ) as Record<string, string>;
  async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const l = local();
    const res = await fetch(`${l.MANGO_BASE_URL}${path}`, {
      method,
      headers: { authorization: `Bearer ${l.MANGO_API_KEY}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
  async function until<T>(fn: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  /** The newest Session's Threads and events and the stack's last log lines (for a failure). */
  async function teamState(): Promise<string> {
    const parts: string[] = [];
    try {
      const [session] = (await api('GET', '/v1/sessions?limit=1')).body.data as Ev[];
      parts.push(`session ${session!.id} ${session!.status}`);
      const threads = (await api('GET', `/v1/sessions/${session!.id}/threads`)).body.data as Ev[];
      for (const t of threads) {
        const events = (await api('GET', `/v1/sessions/${session!.id}/threads/${t.id}/events?limit=1000`))
          .body.data as Ev[];
        parts.push(`thread ${t.id} ${t.status}: ${events.map((e) => e.type).join(' ')}`);
      }
    } catch (err) {
      parts.push(`(state unreadable: ${String(err)})`);
    }
    const logs = join(tmp, 'run/log');
    for (const app of ['orchestrator', 'supervisor', 'api'])
      try {
        parts.push(
          `--- ${app}.log ---`,
          readFileSync(join(logs, `${app}.log`), 'utf8')
            .split('\n')
            .slice(-40)
            .join('\n'),
        );
      } catch {
        /* not started */
      }
    return parts.join('\n');
  }
  async function healthcheck(): Promise<string> {
    const envId = local().MANGO_ENVIRONMENT_ID;
    const w = await api('POST', `/v1/environments/${envId}/work`, { data: { type: 'healthcheck' } });
    expect(w.status).toBe(201);
    return until(
      async () => (await api('GET', `/v1/environments/${envId}/work/${w.body.id}`)).body.result?.status,
      90_000,
      'the healthcheck result',
    );
  }

  beforeAll(async () => {
    model = await startScriptedModel();
    model.script(...Array.from({ length: 300 }, () => agentReply));
    tmp = mkdtempSync('/tmp/mango-journey-');
    chmodSync(tmp, 0o755); // PostgreSQL (its own user) keeps its data below it
    checkout = join(tmp, 'checkout');
    // A clean checkout of this tree (tracked and new files, nothing ignored), sharing node_modules by hard links.
    await sh(
      ROOT,
      process.env,
      `mkdir -p '${checkout}'
       git ls-files -z -co --exclude-standard --deduplicate | tar --null --ignore-failed-read -T - -cf - | tar -xf - -C '${checkout}'
       cp -al node_modules '${checkout}/node_modules' 2>/dev/null || cp -a node_modules '${checkout}/node_modules'`,
      300_000,
    );
    const ports = {
      PORT: 18480,
      API: 18481,
      FILES: 18482,
      PG: 18433,
      TEMPORAL: 18434,
      S3: 18471,
      METRICS: 18464,
    };
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DOCKER_HOST: process.env.DOCKER_HOST,
      MANGO_BASE_IMAGE: process.env.MANGO_BASE_IMAGE,
      MANGO_SERVICES_CACHE: process.env.MANGO_SERVICES_CACHE,
      MANGO_SERVICES_RUN: join(tmp, 'run'),
      MANGO_UP_DATA: join(tmp, 'data'),
      MANGO_PORT: String(ports.PORT),
      MANGO_UP_API_PORT: String(ports.API),
      MANGO_UP_FILES_PORT: String(ports.FILES),
      MANGO_UP_PG_PORT: String(ports.PG),
      MANGO_UP_TEMPORAL_PORT: String(ports.TEMPORAL),
      MANGO_UP_S3_PORT: String(ports.S3),
      MANGO_UP_METRICS_PORT: String(ports.METRICS), // api, files, orchestrator, supervisor: this and the next three
      MANGO_MODEL_BASE_URL: model.url,
    };
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
    // tools/ci/services.sh addressed at the same stack (for the Temporal restart).
    servicesEnv = {
      ...env,
      MANGO_SERVICES_DATA: env.MANGO_UP_DATA,
      MANGO_SERVICES_DURABLE: '1',
      MANGO_TEMPORAL_PORT: String(ports.TEMPORAL),
    };
    // Built while the tour runs; awaited (a failure reported) by the first upAgain().
    const bundlePath = join(tmp, 'workflow-bundle.js');
    workflowBundle = sh(
      checkout,
      env,
      `node -r ./tools/runtime/register.js -e 'require("./apps/orchestrator/src/workflow-bundle").writeWorkflowBundle(process.argv[1]).catch((e) => { console.error(e); process.exit(1); })' '${bundlePath}'`,
      300_000,
    ).then(() => bundlePath);
    workflowBundle.catch(() => undefined);
  }, 400_000);

  afterAll(async () => {
    if (checkout) await run('npm run down', 120_000).catch(() => undefined);
    await model?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, 180_000);

  it('the tour runs verbatim: Agent, update, list, healthcheck succeeded, a bash turn in the sandbox, a live stream, keys', async () => {
    const readme = readFileSync(join(checkout, 'README.md'), 'utf8');
    const tour = /## A five-minute tour[\s\S]*?```bash\n([\s\S]*?)```/.exec(readme)![1]!;
    expect(tour).toMatch(/^npm run up$/m);
    const out = await run(tour, 900_000);

    expect(out).toMatch(/Mango is up/);
    expect(out).toMatch(/MANGO_API_KEY=mango_ak_/);
    expect(out).toMatch(new RegExp(`model: +${model.url.replace(/[.]/g, '\\.')}`));
    expect(out).toMatch(/sandbox network: none/);
    // The web console's URL and each app's /metrics are printed next to the base URL and key.
    expect(out).toMatch(/console: +http:\/\/127\.0\.0\.1:18480\/console\//);
    expect(out).toMatch(/metrics: +http:\/\/127\.0\.0\.1:18464\/metrics \(api\)/);
    expect(out).toMatch(/"version":2,"system":"You write careful code\."/);
    expect(out).toMatch(/^coder$/m);
    expect(out).toMatch(/^\{"status":"succeeded","message":"Sandbox process and workspace check passed"\}$/m);
    expect(out).toMatch(/^agent\.tool_use\t.*git --version/m);
    const result = /^user\.tool_result\t(.*)$/m.exec(out)![1]!;
    expect(result).toMatch(/git version 2\./);
    expect(result).toMatch(/Python 3\./);
    expect(result).toMatch(/ripgrep \d/);
    expect(result).toMatch(/fine/);
    expect(out).toMatch(/^session\.status_idle\t\{"type":"end_turn"\}$/m);
    // The live stream saw the second turn's answer and its idle.
    expect(out).toMatch(/^event: agent\.message$/m);
    expect(out).toMatch(/You're welcome\./);
    expect(out).toMatch(/revoked key_/);

    // The same Session, read through the API: each event once, the tool's real output in the result.
    const sessions = (await api('GET', '/v1/sessions?limit=10')).body.data;
    expect(sessions).toHaveLength(1);
    const events: Ev[] = (await api('GET', `/v1/sessions/${sessions[0].id}/events?limit=1000`)).body.data;
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    expect(events.filter((e) => e.type === 'agent.tool_use').map((e) => e.input.command)).toEqual([
      TOUR_COMMAND,
    ]);
    expect(events.filter((e) => e.type === 'session.status_idle')).toHaveLength(2);
    expect(readFileSync(join(checkout, '.mango/local.env'), 'utf8')).toMatch(
      /^MANGO_ENVIRONMENT_KEY=mango_ek_/m,
    );
  }, 900_000);

  it('a Temporal restart while a tool runs: the turn finishes with no new input, every event once', async () => {
    const l = local();
    const agent = (await api('GET', '/v1/agents?limit=10')).body.data[0].id;
    const s = await api('POST', '/v1/sessions', {
      agent,
      environment_id: l.MANGO_ENVIRONMENT_ID,
      initial_events: [
        { type: 'user.message', content: [{ type: 'text', text: 'Run this in bash: sleep 8; echo slept' }] },
      ],
    });
    expect(s.status).toBe(201);
    const events = async () =>
      (await api('GET', `/v1/sessions/${s.body.id}/events?limit=1000`)).body.data as Ev[];
    await until(
      async () => ((await events()).some((e) => e.type === 'agent.tool_use') ? true : undefined),
      120_000,
      'the tool call',
    );
    await sh(
      checkout,
      servicesEnv,
      'bash tools/ci/services.sh stop temporal && sleep 2 && bash tools/ci/services.sh start temporal',
      180_000,
    );
    const list = await until(
      async () => {
        const l2 = await events();
        return l2.some((e) => e.type === 'session.status_idle') ? l2 : undefined;
      },
      180_000,
      'the turn to finish after the restart',
    );
    expect(list.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'agent.tool_use',
      'span.model_request_end',
      'user.tool_result',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    expect(new Set(list.map((e) => e.id)).size).toBe(list.length);
    expect(JSON.stringify(list.find((e) => e.type === 'user.tool_result')!.content)).toContain('slept');
    expect(list.at(-1)!.stop_reason).toEqual({ type: 'end_turn' });
  }, 400_000);

  it('npm run down && npm run up keeps Agents, Sessions and events; the sandbox works again, under gVisor with MANGO_WORKER_RUNTIME=runsc', async () => {
    const before = (await api('GET', '/v1/sessions?limit=10')).body.data.map((x: any) => x.id).sort();
    const counts = await Promise.all(
      before.map(
        async (id: string) => (await api('GET', `/v1/sessions/${id}/events?limit=1000`)).body.data.length,
      ),
    );
    await run('npm run down', 120_000);
    // README: `MANGO_WORKER_RUNTIME=runsc npm run up` (the CI dockerd declares runsc; docs/operator-guide.md "gVisor").
    const up = await upAgain({ MANGO_WORKER_RUNTIME: 'runsc' });
    expect(up).toMatch(/Mango is up/);
    expect(up).toMatch(/runtime: runsc/);
    expect(readFileSync(join(env.MANGO_SERVICES_RUN!, 'log/supervisor.log'), 'utf8')).toContain(
      '"sandbox_runtime":"runsc"',
    );
    expect((await api('GET', '/v1/sessions?limit=10')).body.data.map((x: any) => x.id).sort()).toEqual(
      before,
    );
    const after = await Promise.all(
      before.map(
        async (id: string) => (await api('GET', `/v1/sessions/${id}/events?limit=1000`)).body.data.length,
      ),
    );
    expect(after).toEqual(counts);
    expect((await api('GET', '/v1/agents?limit=10')).body.data.map((a: any) => a.name)).toEqual(['coder']);
    expect(await healthcheck()).toBe('succeeded');
  }, 900_000);

  it('npm run up recovers from an archived, then a deleted default Environment, then revoked keys, saying what it did', async () => {
    const first = local().MANGO_ENVIRONMENT_ID;
    expect((await api('POST', `/v1/environments/${first}/archive`)).status).toBeLessThan(300);
    let up = await upAgain();
    expect(up).toMatch(new RegExp(`the saved Environment ${first} is archived: choosing another`));
    expect(up).toMatch(/created the Environment local-docker-2 \(env_/);
    const second = local().MANGO_ENVIRONMENT_ID;
    expect(second).not.toBe(first);
    expect(await healthcheck()).toBe('succeeded');

    expect((await api('DELETE', `/v1/environments/${second}`)).status).toBeLessThan(300);
    up = await upAgain();
    expect(up).toMatch(new RegExp(`the saved Environment ${second} is gone \\(deleted\\): choosing another`));
    expect(up).toMatch(/created the Environment local-docker-\d+ \(env_/);
    expect(up).not.toMatch(/at .*\.(ts|js):\d+/); // never a stack trace
    expect(await healthcheck()).toBe('succeeded');

    const keys = JSON.parse(
      await run(
        'set -a; source .mango/local.env; set +a; npx mango api-key list -workspace wrkspc_default --json 2>/dev/null',
        120_000,
      ),
    );
    const active = keys.filter((k: any) => !k.revoked_at);
    expect(active.length).toBeGreaterThanOrEqual(2);
    await run(
      [
        'set -a; source .mango/local.env; set +a',
        ...active.map((k: any) => `npx mango api-key revoke -id ${k.id}`),
      ].join('\n'),
      300_000,
    );
    // This time without a model endpoint, and with an empty ANTHROPIC_BASE_URL in the caller's shell: the
    // stack still comes up (empty variables are not passed on) and says how to configure the model.
    up = await upAgain({ MANGO_MODEL_BASE_URL: '', ANTHROPIC_BASE_URL: '' });
    expect(up).toMatch(/NO KEY: Session turns end with session\.error until you set MANGO_MODEL_API_KEY/);
    expect(up).toMatch(/the saved Workspace key no longer authenticates \(revoked\?\): issued a new one/);
    expect(up).toMatch(/the saved supervisor key no longer authenticates \(revoked\?\): issued a new one/);
    expect(await healthcheck()).toBe('succeeded');
    // The model endpoint back for the blocks that follow (Skills and Memory, webhooks, MCP): without it
    // every turn ends with session.error.
    up = await upAgain();
    expect(up).toMatch(new RegExp(`model: +${model.url.replace(/[.]/g, '\\.')}`));
  }, 1_800_000);

  it('Skills and Memory, as the README shows: the model is told of both, the sandbox has both', async () => {
    const readme = readFileSync(join(checkout, 'README.md'), 'utf8');
    const block = /## Skills and Memory[\s\S]*?```bash\n([\s\S]*?)```/.exec(readme)![1]!;
    const seen = model.requests.length;
    const out = await run(block, 300_000);
    expect(out).toMatch(/^\{"path":"\/style\.md","content_size_bytes":23\}$/m);
    expect(out).toMatch(/^\{"mount_path":"\/mnt\/memory\/team-notes","access":"read_only"\}$/m);
    // The tool result: the staged SKILL.md, then the mounted Memory.
    expect(out).toMatch(/^name: release-notes$/m);
    expect(out).toMatch(/^Group the changes under Added, Fixed and Removed\.$/m);
    expect(out).toMatch(/Write in plain English\./);
    // What the model was told, on the turn's first request.
    const request = model.requests.slice(seen).find((r) => JSON.stringify(r.body).includes('release-notes'));
    expect(request).toBeDefined();
    const system = JSON.stringify(request!.body.system);
    expect(system).toContain('<skill name=\\"release-notes\\" path=\\"skills/release-notes/\\">');
    expect(system).toContain('Write release notes from a list of changes.');
    expect(system).toContain(
      '<memory_store name=\\"Team notes\\" path=\\"/mnt/memory/team-notes\\" access=\\"read_only\\">',
    );
    expect(system).toContain('Follow the style guide.');
    expect(request!.body.tools.map((t: { name: string }) => t.name)).toContain('activate_skill');
  }, 300_000);

  it('webhooks and a scheduled agent, as the README shows: a verified delivery for every run, manual and on the cron', async () => {
    const readme = readFileSync(join(checkout, 'README.md'), 'utf8');
    const block = /## Webhooks and scheduled agents[\s\S]*?```bash\n([\s\S]*?)```/.exec(readme)![1]!;
    const out = await run(block, 400_000);
    const deliveries = [...out.matchAll(/^(session\.created|deployment_run\.\w+)\t(\S+)\t(\S+)$/gm)];
    expect(deliveries).toHaveLength(6);
    expect(new Set(deliveries.map((d) => d[3])).size).toBe(6); // one webhook-id per event
    const types = deliveries.map((d) => d[1]).sort();
    expect(types).toEqual([
      'deployment_run.started',
      'deployment_run.started',
      'deployment_run.succeeded',
      'deployment_run.succeeded',
      'session.created',
      'session.created',
    ]);
    expect(out).not.toMatch(/^rejected/m);
    const runs = [...out.matchAll(/^run (schedule|manual) (sesn_\S+)$/gm)].map((m) => [m[1], m[2]]);
    expect(runs.map((r) => r[0])).toEqual(['schedule', 'manual']);
    // The sessions the runs created are the ones announced by session.created.
    const announced = deliveries.filter((d) => d[1] === 'session.created').map((d) => d[2]);
    expect(announced.sort()).toEqual(runs.map((r) => r[1]).sort());
    expect(out).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/m); // archived
    // The block removes its endpoint, so running it again is not met by rejections from this one.
    expect(out).toMatch(/^deleted webhook_[0-9A-Z]{26}$/m);
  }, 400_000);

  it('multi-agent Threads as docs/api-guide.md shows them: a coordinator and two delegates sharing the sandbox', async () => {
    const guide = readFileSync(join(checkout, 'docs/api-guide.md'), 'utf8');
    const block = /### Try it: a coordinator and two delegates[\s\S]*?```bash\n([\s\S]*?)```/.exec(
      guide,
    )![1]!;
    // The block's own wait ends before the test's timeout, so a stuck team says where it stopped.
    const out = await run(block, 240_000).catch(async (err: Error) => {
      throw new Error(`${err.message}\n--- where the team Session stopped ---\n${await teamState()}`);
    });
    // PRINT_WALKTHROUGHS=1 shows what the block printed (the event sequences a note quotes).
    if (process.env.PRINT_WALKTHROUGHS) console.log(out);
    const lines = out
      .split('\n')
      .filter((l) => l.includes('\t'))
      .map((l) => l.split('\t'));
    const primary = lines.filter((l) => l[0] === 'primary');
    // The primary's own events, in order (lifecycle events of the delegates carry their Thread's id).
    const own = primary.filter((l) => !l[2]).map((l) => l[1]);
    const turn = (calls: string[]) => [
      'session.status_running',
      'span.model_request_start',
      ...calls,
      'span.model_request_end',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ];
    const delegate = ['agent.tool_use', 'agent.tool_result', 'agent.thread_message_sent'];
    expect(own).toEqual([
      'user.message',
      ...turn(delegate),
      'agent.thread_message_received',
      ...turn(delegate),
      'agent.thread_message_received',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    const threadIds = [...new Set(lines.filter((l) => l[0] !== 'primary').map((l) => l[0]))];
    expect(threadIds).toHaveLength(2);
    const delegateLog = (id: string) => lines.filter((l) => l[0] === id).map((l) => l.slice(1));
    const [researcher, writer] = threadIds.map(delegateLog);
    for (const log of [researcher!, writer!])
      expect(log.map((l) => l[0])).toEqual([
        'session.thread_created',
        'agent.thread_message_received',
        'session.thread_status_running',
        'span.model_request_start',
        'agent.tool_use',
        'span.model_request_end',
        'user.tool_result',
        'span.model_request_start',
        'agent.message',
        'span.model_request_end',
        'session.thread_status_idle',
        'agent.thread_message_sent',
      ]);
    // Both calls ran in the one sandbox: the writer read what the researcher wrote.
    expect(researcher!.find((l) => l[0] === 'agent.tool_use')![1]).toBe('bash');
    expect(researcher!.find((l) => l[0] === 'user.tool_result')![1]!.trim()).toBe('noted');
    expect(writer!.find((l) => l[0] === 'user.tool_result')![1]!.trim()).toBe('The sea is salty.');
    // The coordinator's last request carried the writer's report as a message from the writer.
    const lead = model.requests.filter((r) => r.body.system === 'You coordinate.').at(-1)!;
    expect(JSON.stringify(lead.body.messages.at(-1))).toContain(
      '<message from=\\"writer\\">\\nThe sandbox said:\\nThe sea is salty.',
    );
  }, 300_000);

  it('outcomes as docs/api-guide.md shows them: a rubric graded to satisfied after one revision', async () => {
    const guide = readFileSync(join(checkout, 'docs/api-guide.md'), 'utf8');
    const block = /### Try it: a rubric graded to satisfied[\s\S]*?```bash\n([\s\S]*?)```/.exec(guide)![1]!;
    const out = await run(block, 300_000);
    // PRINT_WALKTHROUGHS=1 shows what the block printed (the event sequences a note quotes).
    if (process.env.PRINT_WALKTHROUGHS) console.log(out);
    const rows = out
      .split('\n')
      .filter((l) => l.includes('\t'))
      .map((l) => l.split('\t'));
    expect(rows.map((r) => r[0])).toEqual([
      'user.define_outcome',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'span.outcome_evaluation_start',
      'span.outcome_evaluation_ongoing',
      'span.outcome_evaluation_end',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'span.outcome_evaluation_start',
      'span.outcome_evaluation_ongoing',
      'span.outcome_evaluation_end',
      'session.status_idle',
    ]);
    const ends = rows.filter((r) => r[0] === 'span.outcome_evaluation_end').map((r) => [r[1], r[2]]);
    expect(ends).toEqual([
      ['0', 'needs_revision'],
      ['1', 'satisfied'],
    ]);
    expect(out).toContain('{"result":"satisfied","iteration":1}');
  }, 300_000);

  it('remote MCP as docs/api-guide.md shows it: a Vault credential, an Agent with an MCP toolset, the server sees the token', async () => {
    const guide = readFileSync(join(checkout, 'docs/api-guide.md'), 'utf8');
    const block = /### Try it: your MCP server with a Vault credential[\s\S]*?```bash\n([\s\S]*?)```/.exec(
      guide,
    )![1]!;
    const token = `journey-mcp-${randomBytes(8).toString('hex')}`;
    // A real MCP server (the official SDK's server class over Streamable HTTP, bearer required) on 127.0.0.1.
    const server = await startMcpTestServer([token]);
    try {
      const out = await sh(checkout, { ...env, MCP_URL: server.url, MCP_TOKEN: token }, block, 180_000);
      // The credential is shown without its token.
      const shown = out.split('\n').find((l) => l.startsWith('{') && l.includes('static_bearer'))!;
      expect(JSON.parse(shown)).toEqual({ type: 'static_bearer', mcp_server_url: server.url });
      expect(out).not.toContain(token);
      expect(out).toMatch(/^agent\.mcp_tool_use\tallow$/m);
      expect(out).toMatch(/^agent\.mcp_tool_result\techo: hello from Mango$/m);
      // The server ran the call once, with the Vault's token.
      const calls = server.calls().filter((c) => c.mcp_call === 'echo');
      expect(calls).toEqual([
        {
          mcp_call: 'echo',
          args: { text: 'hello from Mango' },
          token_sha256: createHash('sha256').update(token).digest('hex'),
        },
      ]);
    } finally {
      await server.stop();
    }
  }, 300_000);
});
