import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiUnderTest,
  AppProcess,
  dropBucket,
  freshBucketEnv,
  httpClient,
  startApi,
  startFilesApp,
  startIngress,
} from '@mango/testing';

/**
 * Schemathesis against a throwaway stack: apps/api and apps/files behind the test ingress, on a fresh
 * PostgreSQL database and a fresh S3 bucket. All four phases (examples, coverage, fuzzing, stateful)
 * share one fixed time budget (`MANGO_FUZZ_SECONDS`, default 150 s; `MANGO_FUZZ_SEED` fixes the seed).
 * The run must end with no server error, no schema violation, no content-type mismatch, no undocumented
 * status or header, and no schema-valid request rejected (openapi.yaml no looser than the API).
 * Reports (JSON, NDJSON, JUnit) are kept under tmp/schemathesis.
 */
const ROOT = join(__dirname, '../../..');
const REPORTS = join(ROOT, 'tmp/schemathesis');
const BUDGET_S = Number(process.env.MANGO_FUZZ_SECONDS ?? 150);
const SEED = process.env.MANGO_FUZZ_SEED ?? '20261201';

/** The `st` binary of the cached venv (tools/sdk/ensure-tools.sh, MANGO_SDK_TOOLS=schemathesis). */
function ensureSchemathesis(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', '. tools/sdk/ensure-tools.sh >&2 && printf %s "$SDK_SCHEMATHESIS"'], {
      cwd: ROOT,
      env: { ...process.env, MANGO_SDK_TOOLS: 'schemathesis' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) =>
      code === 0 && out ? resolve(out) : reject(new Error(`ensure-tools.sh exited ${code}`)),
    );
  });
}

function run(bin: string, args: string[], env: Record<string, string>, log: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => chunks.push(d));
    child.stderr.on('data', (d: Buffer) => chunks.push(d));
    child.on('error', reject);
    child.on('exit', (code) => {
      writeFileSync(log, Buffer.concat(chunks));
      resolve(code ?? -1);
    });
  });
}

interface Report {
  stop_reason: string;
  test_cases: { generated: number; with_failures: number };
  operations: { selected: number; tested: number };
  failures: Array<{ code: string; title: string; count: number; operations: string[] }>;
  errors: unknown[];
}

type Seeds = Record<
  'agent' | 'environment' | 'session' | 'thread' | 'file' | 'skill' | 'memory_store',
  string
>;

/**
 * Real resources for the fuzzer to reach past 404: one of each, created through the API. Their ids are
 * offered for the matching path parameters half of the time (the other half stays generated).
 */
async function seed(base: string, key: string, environment: string): Promise<Seeds> {
  const ws = httpClient(base, key);
  const created = async (path: string, body: unknown) => {
    const res = await ws.post(path, body);
    if (res.status !== 201) throw new Error(`seeding ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  };
  const upload = async (path: string, form: FormData) => {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    if (res.status !== 201) throw new Error(`seeding ${path}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  const agent = await created('/v1/agents', { name: 'fuzz', model: 'claude-sonnet-4-6' });
  const text = (t: string) => ({ type: 'user.message', content: [{ type: 'text', text: t }] });
  // Two events or more, so a stream read up to max-stream-events ends without waiting.
  const session = await created('/v1/sessions', {
    agent,
    environment_id: environment,
    initial_events: [text('one'), text('two')],
  });
  const thread = (await ws.get(`/v1/sessions/${session}/threads`)).body.data[0].id as string;
  const fileForm = new FormData();
  fileForm.append('file', new Blob(['hello'], { type: 'text/plain' }), 'hello.txt');
  const file = await upload('/v1/files', fileForm);
  const skillForm = new FormData();
  skillForm.append('files[]', new Blob(['---\nname: fuzz\ndescription: A Skill.\n---\n']), 'fuzz/SKILL.md');
  const skill = await upload('/v1/skills', skillForm);
  const memoryStore = await created('/v1/memory_stores', { name: 'fuzz' });
  await created(`/v1/memory_stores/${memoryStore}/memories`, { path: '/notes.md', content: 'hi' });
  return { agent, environment, session, thread, file, skill, memory_store: memoryStore };
}

/** TOML appended to schemathesis.toml: dictionaries of the seeded ids and where they apply. */
function seedSections(s: Seeds): string {
  const dict = Object.entries(s)
    .map(([name, id]) => `${name} = { values = ["${id}"] }`)
    .join('\n');
  const use = (params: Array<keyof Seeds>) =>
    `parameters = { ${params.map((p) => `"path.${p}_id" = { dictionary = "${p}", probability = 0.5 }`).join(', ')} }`;
  // Deletes stay generated, so the fuzzer cannot delete a seed early and starve the rest.
  const block = (regex: string, params: Array<keyof Seeds>, extra = 'exclude-method = "DELETE"') =>
    `\n[[operations]]\ninclude-path-regex = '${regex}'\n${extra}\n${use(params)}\n`;
  return [
    // The Environment-key block above (it is the last [[operations]] so far).
    `${use(['environment'])}\n`,
    `\n[dictionaries]\n${dict}\n`,
    block('^/v1/agents/\\{agent_id\\}', ['agent']),
    block('^/v1/environments/\\{environment_id\\}(/archive)?$', ['environment']),
    block(
      '^/v1/environments/\\{environment_id\\}/work',
      ['environment'],
      'exclude-operation-id-regex = "^environments\\\\.work\\\\.(poll|ack|stats)$"',
    ),
    block('^/v1/sessions/\\{session_id\\}', ['session', 'thread']),
    block('^/v1/files/\\{file_id\\}', ['file']),
    block('^/v1/skills/\\{skill_id\\}', ['skill']),
    block('^/v1/memory_stores/\\{memory_store_id\\}', ['memory_store']),
  ].join('');
}

/** The FAILURES and ERRORS sections of Schemathesis' output (the reproduction commands), without progress bars. */
function failureSection(log: string): string {
  const lines = log.split('\n').filter((l) => !/[━╸]/.test(l));
  const start = lines.findIndex((l) => /^=+ (FAILURES|ERRORS) =+$/.test(l));
  const end = lines.findIndex((l) => /^=+ SUMMARY =+$/.test(l));
  return lines
    .slice(start < 0 ? 0 : start, end < 0 ? undefined : end)
    .join('\n')
    .slice(-12_000);
}

describe('Schemathesis against a throwaway stack (apps/api + apps/files, real PostgreSQL and S3)', () => {
  let api: ApiUnderTest;
  let files: AppProcess;
  let ingress: Awaited<ReturnType<typeof startIngress>>;
  const s3 = freshBucketEnv('fuzz');
  let st: string;

  beforeAll(async () => {
    st = await ensureSchemathesis();
    api = await startApi('fuzz', s3);
    const started = await startFilesApp(api.db.url, s3);
    files = started.app;
    ingress = await startIngress({ apiUrl: api.url, filesUrl: started.url });
  }, 600_000);
  afterAll(async () => {
    await ingress?.close();
    await files?.stop();
    await api?.close();
    await dropBucket(s3);
  });

  it(
    `finds no server error, schema violation or content-type mismatch in ${BUDGET_S} s`,
    async () => {
      const workspaceKey = (await api.issueKey('wrkspc_default')).api_key;
      const ws = httpClient(ingress.url, workspaceKey);
      const env = (await ws.post('/v1/environments', { name: 'fuzz' })).body.id as string;
      const environmentKey = (await api.issueKey('wrkspc_default', env)).api_key;
      const config = join(REPORTS, 'schemathesis.toml');

      rmSync(REPORTS, { recursive: true, force: true });
      mkdirSync(REPORTS, { recursive: true });
      const seeds = await seed(ingress.url, workspaceKey, env);
      writeFileSync(
        config,
        `${readFileSync(join(ROOT, 'tools/schemathesis/schemathesis.toml'), 'utf8')}${seedSections(seeds)}`,
      );
      const log = join(REPORTS, 'st.log');
      const args = [
        '--config-file',
        config,
        '--no-color',
        'run',
        'openapi.yaml',
        '--url',
        ingress.url,
        '--phases',
        'examples,coverage,fuzzing,stateful',
        '--max-time',
        String(BUDGET_S),
        '--seed',
        SEED,
        // One worker: the API is the bottleneck on a shared machine, and Hypothesis' lambda cache is not
        // thread-safe (a second worker once raised an internal KeyError).
        '--workers',
        '1',
        '--report',
        'json,ndjson,junit',
        '--report-dir',
        REPORTS,
        // e.g. MANGO_FUZZ_CHECKS=positive_data_acceptance to look for schema constraints looser than the API.
        ...(process.env.MANGO_FUZZ_CHECKS ? ['--checks', process.env.MANGO_FUZZ_CHECKS] : []),
      ];
      const code = await run(
        st,
        args,
        { MANGO_FUZZ_WORKSPACE_KEY: workspaceKey, MANGO_FUZZ_ENVIRONMENT_KEY: environmentKey },
        log,
      );
      const reportFile = readdirSync(REPORTS).find((f) => /^json-.*\.json$/.test(f));
      if (!reportFile)
        throw new Error(
          `schemathesis wrote no report (exit ${code}):\n${readFileSync(log, 'utf8').slice(-4000)}`,
        );
      const report = JSON.parse(readFileSync(join(REPORTS, reportFile), 'utf8')) as Report;
      const summary = {
        generated: report.test_cases.generated,
        operations: `${report.operations.tested}/${report.operations.selected}`,
        stop: report.stop_reason,
        failures: report.failures.map((f) => `${f.code} ${f.title} ×${f.count}: ${f.operations.join(', ')}`),
        errors: report.errors.length,
      };
      process.stdout.write(`[api-fuzz] ${JSON.stringify(summary)}\n`);
      if (report.failures.length || report.errors.length)
        process.stdout.write(`[api-fuzz] ${failureSection(readFileSync(log, 'utf8'))}\n`);
      // Compact first: CI shows the first lines of a failed assertion, so they must name what failed.
      expect({
        failures: summary.failures,
        errors: report.errors.map((e) => JSON.stringify(e).slice(0, 400)),
      }).toEqual({ failures: [], errors: [] });
      // It really exercised the API: every operation tested, hundreds of cases at least within the budget.
      expect(report.operations.tested).toBe(report.operations.selected);
      expect(report.operations.selected).toBeGreaterThan(60);
      expect(report.test_cases.generated).toBeGreaterThan(300);
      expect(code).toBe(0);
    },
    (BUDGET_S + 300) * 1000,
  );
});
