import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiUnderTest,
  AppProcess,
  dropBucket,
  freePort,
  freshBucketEnv,
  ScriptedModelServer,
  ScriptedReply,
  startApi,
  startFilesApp,
  startIngress,
  startOrchestrator,
  startScriptedModel,
} from '@mango/testing';

/**
 * The three conformance programs (tools/sdk/conformance/{typescript,python,go}), each run from its built
 * package — the `npm pack` tarball installed into a fresh directory, the wheel pip-installed into a fresh
 * target, the Go module through `replace` with GOFLAGS=-mod=mod — against real processes: apps/api,
 * apps/files (S3), the orchestrator (Temporal) with the scripted model, behind one ingress. Each creates
 * an Agent and a budgeted Session, runs a scripted turn, reads usage and list_cost in the Session and in
 * the session.usage event, streams with Last-Event-ID resume, pages, and moves a ≥ 5 MiB binary File.
 * The Go program also runs its EnvironmentWorker on a second Environment: a healthcheck and a bash tool
 * turn (bash as a host process: the Docker sandbox is covered by apps/supervisor's tests) that reads the
 * SKILL.md of the Skill its Agent pins, staged by the worker below its Workdir, reads a Memory of the
 * Store its Session attaches, mounted by the worker below its MemoryRoot, and writes a file there that the
 * program then finds as a Memory through the API.
 */

const ROOT = join(__dirname, '../../..');

interface Run {
  code: number | null;
  output: string;
}

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += String(d)));
    child.stderr.on('data', (d) => (output += String(d)));
    child.on('close', (code) => resolve({ code, output }));
  });
}

async function ok(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<string> {
  const r = await run(cmd, args, cwd, env);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}:\n${r.output}`);
  return r.output;
}

/**
 * The model: a tool call for the Agent's tool, then (after its result) a short answer. A bash call runs
 * the command a user message names after `run bash: ` (the Go program's reads its staged Skill and its
 * mounted Memory Store, and writes to the Store), else
 * `echo conformance-bash`.
 */
let toolUses = 0;
function respond(body: {
  messages?: Array<{ content?: unknown }>;
  tools?: Array<{ name: string }>;
}): ScriptedReply {
  const last = body.messages?.at(-1)?.content;
  const blocks = Array.isArray(last) ? (last as Array<{ type?: string; text?: string }>) : [];
  const tools = (body.tools ?? []).map((t) => t.name);
  if (blocks.some((b) => b.type === 'tool_result')) return { content: [{ type: 'text', text: 'Done.' }] };
  if (tools.includes('bash')) {
    const text = typeof last === 'string' ? last : blocks.map((b) => b.text ?? '').join('\n');
    const command = /run bash: (.+)/.exec(text)?.[1] ?? 'echo conformance-bash';
    return {
      content: [{ type: 'tool_use', id: `toolu_${++toolUses}`, name: 'bash', input: { command } }],
      stop_reason: 'tool_use',
    };
  }
  if (tools.includes('lookup')) {
    // 2,000 input + 400 output tokens at $3/$15 per million = 1.2 cents → list cost 2 cents.
    return {
      content: [{ type: 'tool_use', id: `toolu_${++toolUses}`, name: 'lookup', input: { q: 'x' } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 2000, output_tokens: 400 },
    };
  }
  return { content: [{ type: 'text', text: 'Hello.' }] };
}

describe('SDK conformance programs (npm tarball, wheel, Go module) against real processes', () => {
  let api: ApiUnderTest;
  let files: { url: string; app: AppProcess };
  let s3: Record<string, string>;
  let model: ScriptedModelServer;
  let orchestrator: AppProcess;
  let ingress: { url: string; close(): Promise<void> };
  let env: Record<string, string>;
  let work: string;

  beforeAll(async () => {
    // Work secrets name the ingress (as MANGO_PUBLIC_BASE_URL does in a deployment): the Go worker
    // reads the Session's Skills (/v1/skills*, apps/files) at the secret's api_base_url.
    const ingressPort = await freePort();
    api = await startApi('sdkconf', { MANGO_PUBLIC_BASE_URL: `http://127.0.0.1:${ingressPort}` });
    s3 = freshBucketEnv('sdkconf');
    files = await startFilesApp(api.db.url, s3);
    model = await startScriptedModel();
    model.script(...Array.from({ length: 200 }, () => respond));
    orchestrator = await startOrchestrator(api.db.url, {
      taskQueue: `sdkconf-${Date.now()}`,
      modelUrl: model.url,
    });
    ingress = await startIngress({ apiUrl: api.url, filesUrl: files.url, port: ingressPort });
    const key = await api.issueKey('wrkspc_default');
    const environment = async (name: string) => {
      const res = await fetch(`${api.url}/v1/environments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      });
      if (res.status !== 201) throw new Error(`creating the Environment: ${res.status} ${await res.text()}`);
      const { id } = (await res.json()) as { id: string };
      return { id, key: (await api.issueKey('wrkspc_default', id)).api_key };
    };
    const sessions = await environment('sdkconf-sessions');
    const workers = await environment('sdkconf-worker');
    env = {
      MANGO_BASE_URL: ingress.url,
      MANGO_API_KEY: key.api_key,
      MANGO_ENVIRONMENT_ID: sessions.id,
      MANGO_ENVIRONMENT_KEY: sessions.key,
      MANGO_WORKER_ENVIRONMENT_ID: workers.id,
      MANGO_WORKER_ENVIRONMENT_KEY: workers.key,
    };
    work = mkdtempSync(join(tmpdir(), 'mango-sdk-conformance-'));
  }, 300_000);

  afterAll(async () => {
    await ingress?.close();
    await orchestrator?.stop();
    await model?.close();
    await files?.app.stop();
    if (s3) await dropBucket(s3).catch(() => undefined);
    await api?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('TypeScript: the packed @mango/sdk, installed from its tarball', async () => {
    const tarball = (
      await ok('bash', [join(ROOT, 'tools/sdk/pack-typescript.sh'), join(work, 'ts-pack')], ROOT)
    )
      .trim()
      .split('\n')
      .at(-1)!;
    const app = join(work, 'ts-app');
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'conformance', version: '1.0.0', private: true }),
    );
    await ok('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', tarball], app);
    copyFileSync(join(ROOT, 'tools/sdk/conformance/typescript/conformance.ts'), join(app, 'conformance.ts'));
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'commonjs',
          target: 'ES2022',
          lib: ['ES2023'],
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
          outDir: 'out',
        },
        files: ['conformance.ts'],
      }),
    );
    await ok('node', [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', app], app);
    const out = await ok('node', [join(app, 'out/conformance.js')], app, env);
    expect(out).toContain('CONFORMANCE OK typescript');
  }, 600_000);

  it('Python: the mango-sdk wheel, pip-installed (sync and async clients)', async () => {
    const wheel = (
      await ok('bash', [join(ROOT, 'tools/sdk/run.sh'), 'python-wheel', join(work, 'py-dist')], ROOT)
    )
      .trim()
      .split('\n')
      .at(-1)!;
    const site = join(work, 'py-site');
    const script = `. tools/sdk/ensure-tools.sh && "$SDK_PY" -m pip install -q --no-deps --disable-pip-version-check --target "$0" "$1" && cd "$0/.." && PYTHONPATH="$0" "$SDK_PY" "$2"`;
    const out = await ok(
      'bash',
      ['-c', script, site, wheel, join(ROOT, 'tools/sdk/conformance/python/conformance.py')],
      ROOT,
      { ...env, MANGO_SDK_SOURCE: join(ROOT, 'libs/sdk/python'), PYTHONDONTWRITEBYTECODE: '1' },
    );
    expect(out).toContain('CONFORMANCE OK python');
  }, 600_000);

  it('Go: the SDK module via replace, including EnvironmentWorker: a healthcheck and a bash tool turn reading a staged Skill and a mounted Memory Store', async () => {
    const script = `. tools/sdk/ensure-tools.sh && cd tools/sdk/conformance/go && GOFLAGS="$GOFLAGS -mod=mod" "$SDK_GO" run .`;
    const out = await ok('bash', ['-c', script], ROOT, env);
    expect(out).toContain('CONFORMANCE OK go');
    // The bash call reached the scripted model's second request as a tool result.
    const bashTurns = model.requests.filter((r) =>
      (r.body.tools ?? []).some((t: { name: string }) => t.name === 'bash'),
    );
    expect(bashTurns.length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(bashTurns.at(-1)!.body.messages.at(-1))).toContain('conformance-bash');
    expect(JSON.stringify(bashTurns.at(-1)!.body.messages.at(-1))).toContain('skill-body-go-ok');
    expect(JSON.stringify(bashTurns.at(-1)!.body.messages.at(-1))).toContain('memory-seed-go-ok');
  }, 600_000);
});
