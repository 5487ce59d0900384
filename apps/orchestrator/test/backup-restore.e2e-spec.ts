import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { openSecrets } from '@mango/feature-vaults';
import { keyringFromSettings } from '@mango/platform-secrets';
import {
  answers,
  AppProcess,
  createEmptyDatabase,
  dropBucket,
  freePort,
  freshBucketEnv,
  httpClient,
  HttpClient,
  startApp,
  startFilesApp,
  TestDatabase,
} from '@mango/testing';
import {
  SessionEvent,
  SessionStack,
  sessionEvents,
  STACK_TIMEOUT_MS,
  startOrchestrator,
  startSessionStack,
  TEST_MODEL_PROFILES,
  untilEvents,
} from './support';

/**
 * The backup-and-restore drill (issue #35; docs/operations.md, "Backup and restore"), over real processes:
 * stack A (apps/api, apps/files, an orchestrator, PostgreSQL, versitygw, Temporal, the scripted model) holds
 * Agents, Files, a Skill with two versions, a Memory Store with versions, a Vault credential, a finished
 * Session, a Session waiting on a custom tool result and a Session mid-tool-call (a bash call its worker —
 * this test, over the Work API — holds). `mango backup` runs, as a process, while that turn runs. Then A
 * stops, `mango restore` fills an empty database and an empty bucket, and stack B starts on them with an
 * empty Temporal namespace. Everything compares equal; the Session sweeper restarts the running Session's
 * workflow from its log (ADR 0016); both interrupted turns finish on B; no tool call runs twice.
 */
const ROOT = resolve(__dirname, '../../..');
const KEYRING = `kdrill1:${randomBytes(32).toString('base64')},kdrill0:${randomBytes(32).toString('base64')}`;
const VAULT_TOKEN = `sb-drill-${randomBytes(12).toString('hex')}`;
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

interface Cli {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `mango …` as the operator runs it: a child process with only the variables given. */
function mango(args: string[], env: Record<string, string>): Promise<Cli> {
  const began = Date.now();
  const child = spawn(process.execPath, [join(ROOT, 'tools/cli/bin/mango.js'), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  return new Promise((done) =>
    child.on('close', (code) => done({ code, stdout, stderr, ms: Date.now() - began })),
  );
}

async function listAll(c: HttpClient, path: string, limit = 100): Promise<any[]> {
  const out: any[] = [];
  let page: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res: { status: number; body: any } = await c.get(
      `${path}${sep}limit=${limit}${page ? `&page=${encodeURIComponent(page)}` : ''}`,
    );
    expect(res.status).toBe(200);
    out.push(...res.body.data);
    page = res.body.next_page ?? null;
  } while (page);
  return out;
}

async function bytesOf(url: string, key: string): Promise<Buffer> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** Everything the drill compares, read through the public API (and the Vault secret through the keyring). */
interface Snapshot {
  agents: any[];
  sessions: Record<string, SessionEvent[]>;
  files: Array<{ meta: any; sha256: string; bytes: number }>;
  skills: Array<{ skill: any; versions: any[]; archives: string[] }>;
  memories: Array<{ store: any; memories: any[]; versions: any[] }>;
  vaults: Array<{ vault: any; credentials: any[] }>;
  /** The static bearer token opened with the keyring: compared, never printed. */
  vaultSecretMatches: boolean;
}

async function snapshot(
  ws: HttpClient,
  filesUrl: string,
  key: string,
  sessionIds: string[],
  sql: (q: string) => Promise<any[]>,
  keyring: ReturnType<typeof keyringFromSettings>,
): Promise<Snapshot> {
  const sessions: Snapshot['sessions'] = {};
  for (const id of sessionIds) sessions[id] = await listAll(ws, `/v1/sessions/${id}/events`);
  const fc = httpClient(filesUrl, key);
  const files = [];
  for (const meta of await listAll(fc, '/v1/files')) {
    const b = await bytesOf(`${filesUrl}/v1/files/${meta.id}/content`, key);
    files.push({ meta, sha256: sha(b), bytes: b.length });
  }
  const skills = [];
  for (const skill of await listAll(fc, '/v1/skills')) {
    const versions = await listAll(fc, `/v1/skills/${skill.id}/versions`);
    const archives = [];
    for (const v of versions)
      archives.push(
        sha(await bytesOf(`${filesUrl}/v1/skills/${skill.id}/versions/${v.version}/content`, key)),
      );
    skills.push({ skill, versions, archives });
  }
  const memories = [];
  for (const store of await listAll(fc, '/v1/memory_stores'))
    memories.push({
      store,
      memories: await listAll(fc, `/v1/memory_stores/${store.id}/memories?view=full`, 20),
      versions: await listAll(fc, `/v1/memory_stores/${store.id}/memory_versions?view=full`, 20),
    });
  const vaults = [];
  for (const vault of await listAll(ws, '/v1/vaults'))
    vaults.push({ vault, credentials: await listAll(ws, `/v1/vaults/${vault.id}/credentials`) });
  const rows = await sql('SELECT id, kek_id, wrapped_key, secret_ciphertext FROM vault_credentials');
  const vaultSecretMatches =
    rows.length === 1 &&
    rows.every(
      (r) =>
        (
          openSecrets(keyring!, r.id, {
            kekId: r.kek_id,
            wrappedKey: r.wrapped_key,
            secretCiphertext: r.secret_ciphertext,
          }) as { token?: string } | null
        )?.token === VAULT_TOKEN,
    );
  return {
    agents: await listAll(ws, '/v1/agents'),
    sessions,
    files,
    skills,
    memories,
    vaults,
    vaultSecretMatches,
  };
}

const SKILL_MD = (d: string) => `---\nname: drill-tools\ndescription: ${d}\n---\n\n# drill\n`;

async function sendSkill(filesUrl: string, key: string, description: string, skillId?: string) {
  const form = new FormData();
  form.append('files[]', new Blob([SKILL_MD(description)]), 'drill-tools/SKILL.md');
  form.append('files[]', new Blob([randomBytes(5000)]), 'drill-tools/data.bin');
  const res = await fetch(`${filesUrl}/v1/skills${skillId ? `/${skillId}/versions` : ''}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; skill_id?: string };
}

async function uploadFile(filesUrl: string, key: string, bytes: Buffer, name: string) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: 'application/octet-stream' }), name);
  const res = await fetch(`${filesUrl}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string };
}

describe('backup-and-restore drill: back up while turns run, restore onto an empty stack (real processes)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mango-drill-'));
  const sourceBucket = freshBucketEnv('drill-a');
  const targetBucket = freshBucketEnv('drill-b');
  let a: SessionStack;
  let target: TestDatabase | undefined;
  const b: { api?: AppProcess; files?: AppProcess; orchestrator?: AppProcess } = {};
  let temporal: Connection | undefined;
  const timings: Array<[string, number]> = [];
  const timed = async <T>(step: string, f: () => Promise<T>): Promise<T> => {
    const t = Date.now();
    try {
      return await f();
    } finally {
      timings.push([step, Date.now() - t]);
    }
  };

  beforeAll(async () => {
    a = await timed('start stack A', () =>
      startSessionStack('drill-a', {
        files: sourceBucket,
        environment: true,
        apiEnv: { MANGO_KEYRING: KEYRING },
        orchestratorEnv: { MANGO_KEYRING: KEYRING, MANGO_SESSION_SWEEP_SECONDS: '1' },
      }),
    );
    temporal = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
  }, STACK_TIMEOUT_MS);

  afterAll(async () => {
    await b.orchestrator?.stop();
    await b.files?.stop();
    await b.api?.stop();
    await target?.drop();
    await dropBucket(targetBucket).catch(() => undefined);
    await a?.close();
    await temporal?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('every Agent, Session event, File byte, Skill and Memory version and Vault credential compares equal; interrupted turns finish; nothing runs twice', async () => {
    const { ws, key, model } = a;
    const filesUrl = a.files!.url;
    const sqlA = (q: string) => a.api.sql(q);

    // ---- Stack A: the data -------------------------------------------------------------------------
    const bashAgent = (
      await ws.post('/v1/agents', {
        name: 'drill-bash',
        model: 'm',
        tools: [{ type: 'agent_toolset_20260401' }],
      })
    ).body.id;
    const customAgent = (
      await ws.post('/v1/agents', {
        name: 'drill-custom',
        model: 'm',
        tools: [
          {
            type: 'custom',
            name: 'lookup_order',
            description: 'Look up an order',
            input_schema: { type: 'object', properties: { order: { type: 'string' } } },
          },
        ],
      })
    ).body.id;
    expect((await ws.post(`/v1/agents/${customAgent}`, { version: 1, system: 'be brief' })).status).toBe(200);
    const customEnv = (await ws.post('/v1/environments', { name: 'custom' })).body.id;
    await uploadFile(filesUrl, key, randomBytes(1_500_000), 'big.bin');
    await uploadFile(filesUrl, key, Buffer.from('small file\n'), 'small.txt');
    const skill = await sendSkill(filesUrl, key, 'first');
    await sendSkill(filesUrl, key, 'second', skill.id);
    const fc = httpClient(filesUrl, key);
    const store = (await fc.post('/v1/memory_stores', { name: 'drill notes' })).body.id;
    const memory = (
      await fc.post(`/v1/memory_stores/${store}/memories`, { path: '/prefs.md', content: 'tabs' })
    ).body.id;
    expect(
      (await fc.post(`/v1/memory_stores/${store}/memories/${memory}`, { content: 'spaces' })).status,
    ).toBe(200);
    const vault = (await ws.post('/v1/vaults', { display_name: 'drill' })).body.id;
    expect(
      (
        await ws.post(`/v1/vaults/${vault}/credentials`, {
          auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: VAULT_TOKEN },
        })
      ).status,
    ).toBe(201);

    // Executions of each tool call, by its id: the test is the executor of every call.
    const executions = new Map<string, number>();
    const executed = (id: string) => executions.set(id, (executions.get(id) ?? 0) + 1);
    const custom = (text: string) =>
      ws.post('/v1/sessions', {
        agent: customAgent,
        environment_id: customEnv,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text }] }],
      });
    const customReply = (id: string) => ({
      content: [{ type: 'tool_use', id, name: 'lookup_order', input: { order: id } }],
      stop_reason: 'tool_use',
    });
    const finalReply = (body: any) => ({
      content: [
        { type: 'text', text: `done: ${JSON.stringify(body.messages.at(-1).content[0].content ?? '')}` },
      ],
    });
    const idles = (n: number) => (l: SessionEvent[]) =>
      l.filter((e) => e.type === 'session.status_idle').length >= n;

    // A finished turn with a custom tool call.
    model.script(customReply('toolu_finished'), finalReply);
    const finished = (await custom('order F-1?')).body.id;
    const fUse = (await untilEvents(ws, finished, idles(1))).find((e) => e.type === 'agent.custom_tool_use')!;
    executed(fUse.id);
    await ws.post(`/v1/sessions/${finished}/events`, {
      events: [
        {
          type: 'user.custom_tool_result',
          custom_tool_use_id: fUse.id,
          content: [{ type: 'text', text: 'shipped' }],
        },
      ],
    });
    expect((await untilEvents(ws, finished, idles(2))).at(-1)!.stop_reason).toEqual({ type: 'end_turn' });

    // A turn waiting on a custom tool result (idle, requires_action).
    model.script(customReply('toolu_waiting'));
    const waiting = (await custom('order W-1?')).body.id;
    const wUse = (await untilEvents(ws, waiting, idles(1))).find((e) => e.type === 'agent.custom_tool_use')!;
    executed(wUse.id);

    // A turn mid-tool-call: a bash call held by its worker (this test), the Session running.
    model.script({
      content: [{ type: 'tool_use', id: 'toolu_running', name: 'bash', input: { command: 'sleep 600' } }],
      stop_reason: 'tool_use',
    });
    const running = (
      await ws.post('/v1/sessions', {
        agent: bashAgent,
        environment_id: a.environmentId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'run the slow tool' }] }],
      })
    ).body.id;
    const polled = await a.supervisor!.get(`/v1/environments/${a.environmentId}/work/poll?block_ms=20000`);
    expect(polled.body.data).toEqual({ type: 'session', id: running });
    const work = `/v1/environments/${a.environmentId}/work/${polled.body.id}`;
    await a.supervisor!.post(`${work}/ack`);
    const token = JSON.parse(Buffer.from(polled.body.secret, 'base64url').toString())
      .sessions_token as string;
    // The longest lease the API grants (300 s): the worker outlives the control plane's restore.
    const beat = await httpClient(a.api.url, token).post(
      `${work}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT&desired_ttl_seconds=300`,
    );
    expect(beat.status).toBe(200);
    const rUse = (await untilEvents(ws, running, (l) => l.some((e) => e.type === 'agent.tool_use'))).find(
      (e) => e.type === 'agent.tool_use',
    )!;
    executed(rUse.id);
    expect((await ws.get(`/v1/sessions/${running}`)).body.status).toBe('running');
    const modelRequestsBefore = model.requests.length;
    expect(modelRequestsBefore).toBe(4);

    // ---- Backup while the turn runs ---------------------------------------------------------------
    const identity = join(dir, 'identity.txt');
    const recipient = (await mango(['backup', 'new-identity', '--file', identity], {})).stdout.trim();
    expect(recipient).toMatch(/^age1/);
    const archive = join(dir, 'drill.age');
    const backup = await timed('mango backup (A running)', () =>
      mango(['backup', '--out', archive, '--recipient', recipient, '--json'], {
        MANGO_DATABASE_URL: a.api.db.url,
        MANGO_KEYRING: KEYRING,
        ...sourceBucket,
      }),
    );
    expect(backup.stderr).not.toMatch(/mango: /);
    expect(backup.code).toBe(0);
    const backupSummary = JSON.parse(backup.stdout);
    expect((await ws.get(`/v1/sessions/${running}`)).body.status).toBe('running');
    for (const secret of [VAULT_TOKEN, ...KEYRING.split(',').map((e) => e.split(':')[1]!)])
      expect(readFileSync(archive).includes(Buffer.from(secret))).toBe(false);

    const keyringA = keyringFromSettings({ MANGO_KEYRING: KEYRING });
    const before = await timed('snapshot A', () =>
      snapshot(ws, filesUrl, key, [finished, waiting, running], sqlA, keyringA),
    );
    expect(before.vaultSecretMatches).toBe(true);

    // ---- The bad day: stack A is gone (its database, bucket and Temporal state are not used again) --
    await a.orchestrator.stop();
    await a.files!.app.stop();
    await a.api.app.stop();

    // ---- Restore onto empty PostgreSQL, S3 and Temporal ------------------------------------------
    target = await createEmptyDatabase('drill-b');
    const keyringFile = join(dir, 'keyring.txt');
    const restore = await timed('mango restore', () =>
      mango(['restore', '--in', archive, '--identity', identity, '--keyring-out', keyringFile, '--json'], {
        MANGO_DATABASE_URL: target!.url,
        ...targetBucket,
      }),
    );
    expect(restore.stderr).not.toMatch(/mango: /);
    expect(restore.code).toBe(0);
    expect(statSync(keyringFile).mode & 0o777).toBe(0o600);
    const namespace = `drill-${randomBytes(4).toString('hex')}`;
    await timed('register an empty Temporal namespace', async () => {
      await temporal!.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs('1 day'),
      });
      for (let i = 0; ; i++) {
        try {
          await temporal!.workflowService.describeNamespace({ namespace });
          break;
        } catch (e) {
          if (i > 100) throw e;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    });
    const restoredEnv = { MANGO_KEYRING_FILE: keyringFile };
    await timed('start stack B', async () => {
      const port = await freePort();
      b.api = await startApp(
        'apps/api/src/main.ts',
        {
          MANGO_DATABASE_URL: target!.url,
          MANGO_API_PORT: String(port),
          MANGO_LOG_LEVEL: 'warn',
          MANGO_DB_POOL_SIZE: '5',
          ...restoredEnv,
        },
        answers(`http://127.0.0.1:${port}/healthz`),
      );
      (b as any).apiUrl = `http://127.0.0.1:${port}`;
      const files = await startFilesApp(target!.url, targetBucket);
      b.files = files.app;
      (b as any).filesUrl = files.url;
      b.orchestrator = await startOrchestrator(target!.url, {
        taskQueue: `drill-b-${Date.now()}`,
        modelUrl: model.url,
        env: {
          MANGO_MODEL_PROFILES: TEST_MODEL_PROFILES,
          MANGO_TEMPORAL_NAMESPACE: namespace,
          MANGO_SESSION_SWEEP_SECONDS: '1',
          ...restoredEnv,
        },
      });
    });
    const apiB: string = (b as any).apiUrl;
    const filesB: string = (b as any).filesUrl;
    const wsB = httpClient(apiB, key);
    const targetSql = async (q: string) => {
      const { Client } = await import('pg');
      const c = new Client({ connectionString: target!.url });
      await c.connect();
      try {
        return (await c.query(q)).rows;
      } finally {
        await c.end();
      }
    };

    // ---- Everything compares equal ------------------------------------------------------------------
    const keyringB = keyringFromSettings({ MANGO_KEYRING_FILE: keyringFile });
    expect(keyringB!.ids()).toEqual(keyringA!.ids());
    const after = await timed('snapshot B', () =>
      snapshot(wsB, filesB, key, [finished, waiting, running], targetSql, keyringB),
    );
    expect(after.agents).toEqual(before.agents);
    expect(after.sessions).toEqual(before.sessions);
    expect(after.files).toEqual(before.files);
    expect(after.skills).toEqual(before.skills);
    expect(after.memories).toEqual(before.memories);
    expect(after.vaults).toEqual(before.vaults);
    expect(after.vaultSecretMatches).toBe(true);

    // ---- The running Session's workflow is restarted from its log by the sweeper (empty Temporal) ----
    // Its warning line names the Session and what it found (no workflow in the new namespace).
    const restartedRunning = () =>
      b
        .orchestrator!.logs()
        .split('\n')
        .some(
          (l) =>
            l.includes('session sweeper restarted a workflow') &&
            l.includes(`"session_id":"${running}"`) &&
            l.includes('"found":"not_found"'),
        );
    await timed('sweeper restarts the running Session', async () => {
      const deadline = Date.now() + 60_000;
      while (!restartedRunning() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    });
    expect(restartedRunning()).toBe(true);

    // ---- The interrupted turns finish on B; the worker kept its lease and answers once -----------------
    model.script(finalReply, finalReply);
    const workerB = httpClient(apiB, token);
    const renewed = await workerB.post(
      `${work}/heartbeat?expected_last_heartbeat=${encodeURIComponent(beat.body.last_heartbeat)}&desired_ttl_seconds=300`,
    );
    expect(renewed.status).toBe(200);
    await timed('interrupted turns finish on B', async () => {
      expect(
        (
          await workerB.post(`/v1/sessions/${running}/events`, {
            events: [
              {
                type: 'user.tool_result',
                tool_use_id: rUse.id,
                content: [{ type: 'text', text: 'slow done' }],
              },
            ],
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await wsB.post(`/v1/sessions/${waiting}/events`, {
            events: [
              {
                type: 'user.custom_tool_result',
                custom_tool_use_id: wUse.id,
                content: [{ type: 'text', text: 'late' }],
              },
            ],
          })
        ).status,
      ).toBe(200);
      await untilEvents(wsB, running, idles(1), 120_000);
      await untilEvents(wsB, waiting, idles(2), 120_000);
    });
    const runningAfter = await sessionEvents(wsB, running);
    const waitingAfter = await sessionEvents(wsB, waiting);
    for (const [list, beforeList] of [
      [runningAfter, before.sessions[running]!],
      [waitingAfter, before.sessions[waiting]!],
    ] as const) {
      // What the log held at the backup stays the prefix; every event once, seq gapless.
      expect(list.slice(0, beforeList.length)).toEqual(beforeList);
      expect(new Set(list.map((e) => e.id)).size).toBe(list.length);
      expect(list.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
      expect(list.filter((e) => e.type === 'agent.message')).toHaveLength(1);
    }
    // No tool call ran twice: one use per call in the logs, each executed once, no new call asked for.
    const uses = [...runningAfter, ...waitingAfter, ...(await sessionEvents(wsB, finished))].filter(
      (e) => e.type === 'agent.tool_use' || e.type === 'agent.custom_tool_use',
    );
    expect(uses.map((e) => e.id).sort()).toEqual([...executions.keys()].sort());
    expect([...executions.values()]).toEqual([1, 1, 1]);
    expect(runningAfter.filter((e) => e.type === 'user.tool_result')).toHaveLength(1);
    // The model was asked once more per interrupted turn: the recorded steps were read back, not re-asked.
    expect(model.requests.length - modelRequestsBefore).toBe(2);
    expect((await wsB.get(`/v1/sessions/${running}`)).body.status).toBe('idle');

    // ---- The lead's table ------------------------------------------------------------------------------
    const events = Object.values(before.sessions).reduce((n, l) => n + l.length, 0);
    const rows: Array<[string, string | number, string | number]> = [
      ['Agents', before.agents.length, 'equal'],
      [
        'Sessions / events (ids, seq, payloads)',
        `${Object.keys(before.sessions).length} / ${events}`,
        'equal',
      ],
      [
        'Files / bytes (sha256)',
        `${before.files.length} / ${before.files.reduce((n, f) => n + f.bytes, 0)}`,
        'equal',
      ],
      ['Skill versions (archive sha256)', before.skills.reduce((n, s) => n + s.versions.length, 0), 'equal'],
      ['Memory versions', before.memories.reduce((n, m) => n + m.versions.length, 0), 'equal'],
      [
        'Vault credentials (secret opens through restored keyring)',
        before.vaults.reduce((n, v) => n + v.credentials.length, 0),
        'equal',
      ],
      [
        'Objects / object bytes in archive',
        `${backupSummary.counts.objects} / ${backupSummary.counts.object_bytes}`,
        '-',
      ],
      [
        'Dump bytes / archive bytes',
        `${backupSummary.counts.dump_bytes} / ${backupSummary.archive_bytes}`,
        '-',
      ],
      ['Tool calls executed (each once)', executions.size, 'once each'],
      ['Interrupted turns finished on B', 2, 'end_turn'],
      ['Model requests after restore', model.requests.length - modelRequestsBefore, '1 per turn'],
    ];
    process.stdout.write(
      [
        '',
        '| compared | count | result |',
        '| --- | --- | --- |',
        ...rows.map((r) => `| ${r.join(' | ')} |`),
        '',
        '| step | ms |',
        '| --- | --- |',
        ...timings.map(([s, ms]) => `| ${s} | ${ms} |`),
        '',
      ].join('\n'),
    );
  }, 900_000);
});
