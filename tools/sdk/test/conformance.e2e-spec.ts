import { execFileSync, spawn } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
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
 * The three conformance programs (tools/sdk/conformance/{typescript,python,go}), each run from the files
 * `npm run release` makes (tools/release/release.sh --only sdks, checked against its SHA256SUMS), installed
 * offline into an empty project — the npm tarball with `npm install --offline`, the wheel into a fresh venv
 * with `pip install --no-index`, the Go module with `go get mango.dev/sdk@v<version>` from the release's
 * GOPROXY directory (no code host, an empty module cache) — against real processes: apps/api,
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
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** The Python spelling of VERSION (PEP 440: 1.0.0rc1 for 1.0.0-rc.1), as the wheel's name and __version__. */
const PY_VERSION = execFileSync('node', [join(ROOT, 'tools/release/version.js'), 'python'], {
  encoding: 'utf8',
}).trim();

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
  let release: string;

  beforeAll(async () => {
    // The release's SDK files, made first (the same script `npm run release` runs) and verified.
    work = mkdtempSync(join(tmpdir(), 'mango-sdk-conformance-'));
    release = join(work, 'release');
    await ok(
      'bash',
      [join(ROOT, 'tools/release/release.sh'), VERSION, '--only', 'sdks', '--out', release],
      ROOT,
    );
    await ok('sha256sum', ['--check', '--strict', '--quiet', 'SHA256SUMS'], release);

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
  }, 600_000);

  afterAll(async () => {
    await ingress?.close();
    await orchestrator?.stop();
    await model?.close();
    await files?.app.stop();
    if (s3) await dropBucket(s3).catch(() => undefined);
    await api?.close();
    // The Go module cache is read-only by default; -modcacherw (ensure-tools.sh) keeps it removable.
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("TypeScript: the release's @mango/sdk tarball, installed offline into an empty project", async () => {
    const tarball = join(release, 'npm', `mango-sdk-${VERSION}.tgz`);
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
          module: 'nodenext',
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
    expect(readdirSync(join(app, 'node_modules/@mango/sdk/dist'))).toContain('index.mjs');
  }, 600_000);

  it("Python: the release's mango-sdk wheel, pip-installed with --no-index into a fresh venv (sync and async clients)", async () => {
    const wheel = join(release, 'python', `mango_sdk-${PY_VERSION}-py3-none-any.whl`);
    expect(readdirSync(join(release, 'python')).sort()).toEqual([
      `mango_sdk-${PY_VERSION}-py3-none-any.whl`,
      `mango_sdk-${PY_VERSION}.tar.gz`,
    ]);
    // A fresh venv with nothing from an index: its dependencies (httpx, typing_extensions) are visible
    // through a .pth file naming the SDK tools' site-packages, so pip resolves the wheel's declared
    // requirements without downloading anything, and only the wheel's copy of mango_sdk is importable.
    const venv = join(work, 'py-venv');
    const script = `. tools/sdk/ensure-tools.sh
      "$SDK_PY" -m venv "$0"
      site=$("$SDK_PY" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
      own=$("$0/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
      echo "$site" > "$own/mango-sdk-tools.pth"
      "$0/bin/python" -m pip install -q --no-index --disable-pip-version-check "$1"
      cd "$0" && "$0/bin/python" "$2"`;
    const out = await ok(
      'bash',
      ['-c', script, venv, wheel, join(ROOT, 'tools/sdk/conformance/python/conformance.py')],
      ROOT,
      { ...env, MANGO_SDK_SOURCE: join(ROOT, 'libs/sdk/python'), PYTHONDONTWRITEBYTECODE: '1' },
    );
    expect(out).toContain(`CONFORMANCE OK python ${PY_VERSION}`);
  }, 600_000);

  it("Go: the release's module zip, required as mango.dev/sdk v<version> by an empty module and fetched from the release's GOPROXY directory, including EnvironmentWorker: a healthcheck and a bash tool turn reading a staged Skill and a mounted Memory Store", async () => {
    // An empty module with the conformance program and the go.mod that `go get mango.dev/sdk@v<version>
    // && go mod tidy` writes: the SDK and, as indirect requirements, the SDK's own (its go.mod's require
    // blocks); go.sum starts as the SDK's. The module cache is empty, so the SDK can only come from the
    // release's zip (GOPROXY=file://<release>/go); its dependencies come from the SDK tools' module cache,
    // read as a second file proxy. Nothing is fetched from the network: the SDK's sum is in no checksum
    // database yet (GONOSUMDB), its dependencies' are in go.sum.
    const app = join(work, 'go-app');
    mkdirSync(app);
    copyFileSync(join(ROOT, 'tools/sdk/conformance/go/main.go'), join(app, 'main.go'));
    const sdkMod = readFileSync(join(ROOT, 'libs/sdk/go/go.mod'), 'utf8');
    const indirect = sdkMod
      .slice(sdkMod.indexOf('\nrequire'))
      .replace(/^(\t?(?:require )?\S+ v\S+)$/gm, '$1 // indirect');
    writeFileSync(
      join(app, 'go.mod'),
      `module conformance\n\ngo 1.26.0\n\nrequire mango.dev/sdk v${VERSION}\n${indirect}`,
    );
    copyFileSync(join(ROOT, 'libs/sdk/go/go.sum'), join(app, 'go.sum'));
    const script = `. tools/sdk/ensure-tools.sh
      export GOPROXY="file://$0,file://$GOMODCACHE/cache/download" GONOSUMDB=mango.dev/sdk GOMODCACHE="$1"
      cd "$2" && GOFLAGS="$GOFLAGS -mod=mod" "$SDK_GO" run .`;
    const out = await ok(
      'bash',
      ['-c', script, join(release, 'go'), join(work, 'go-modcache'), app],
      ROOT,
      env,
    );
    // The SDK was extracted from the release's zip into the test's own module cache.
    expect(readdirSync(join(work, 'go-modcache/mango.dev'))).toEqual([`sdk@v${VERSION}`]);
    expect(readFileSync(join(app, 'go.sum'), 'utf8')).toContain(`mango.dev/sdk v${VERSION} h1:`);
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
