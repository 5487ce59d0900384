import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { request, IncomingMessage } from 'node:http';
import { join } from 'node:path';
import Docker from 'dockerode';
import { Client, Connection } from '@temporalio/client';
import { decodeWorkSecret } from '@mango/feature-work';
import {
  answers,
  AppProcess,
  freePort,
  httpClient,
  HttpClient,
  logged,
  startApi,
  startApp,
  startScriptedModel,
  startIngress,
  startToxiproxy,
  ApiUnderTest,
  ScriptedModelServer,
  Toxiproxy,
  ToxiproxyLink,
  pauseContainer,
  collectGarbage,
  INSPECTOR_NODE_OPTIONS,
} from '@mango/testing';
import { ObjectStore } from '@mango/adapter-object-store';

/**
 * The fault matrix (issue #19, docs/testing.md "Fault matrix"): one stack of real processes — apps/api,
 * apps/orchestrator, the Docker supervisor with a real item container, the scripted model, its own
 * Temporal dev server (in memory, so a restart loses its state) and a Toxiproxy between the supervisor
 * (the worker's only way to Mango) and the API — shared by every fault. For each fault, a Session whose
 * turn calls a slow bash tool runs while a second Session streams over SSE; the fault is injected while
 * the tool runs; then the same assertions every time: no event lost and none duplicated (the log's
 * sequence is gapless, and SSE clients resuming with Last-Event-ID got each event once), each
 * `agent.tool_use` answered exactly once and executed at most once, and the turn finished without new
 * input within lease TTL + 10 s of the tool's end or the fault's end, whichever is later. The table
 * (fault × lost, duplicated, tools run twice, recovery seconds) is printed at the end, then the secret
 * canary: no credential the run created appears in any process log, Temporal history or event.
 */

const ROOT = join(__dirname, '../..');
// Longer than the 20 s network cut with room for a renewal after it (renewed every TTL/3): a cut the lease
// outlives must not re-run the call. With 6 s, the cut expired the lease and the call ran twice in CI.
// Production's default is 60 s.
const TTL_SECONDS = 45;
const TOOL_SECONDS = 8;
/**
 * apps/api runs with its inspector on a free loopback port: the soak asks it for a full garbage
 * collection before each sample (collectGarbage, @mango/testing), so its RSS is what the process retains,
 * not garbage a loaded machine had not collected yet.
 */
const API_INSPECTOR = { NODE_OPTIONS: INSPECTOR_NODE_OPTIONS };
const SWEEP_SECONDS = 2;
/** The soak's length (MANGO_SOAK_SECONDS, default 180, at most an hour). */
const SOAK_SECONDS = Math.min(Number(process.env.MANGO_SOAK_SECONDS) || 180, 3600);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Ev = { id: string; type: string; [k: string]: any };

/** A plain SSE client without de-duplication of its own: it reconnects with Last-Event-ID after any close. */
class ResumingClient {
  readonly frames: Array<{ id?: string; event?: string }> = [];
  connections = 0;
  /** Status codes of refused connections (e.g. 502 while the API restarts), for the failure message. */
  readonly refused: number[] = [];
  private lastId: string | undefined;
  private current?: IncomingMessage;
  private stopped = false;

  constructor(
    private readonly base: () => string,
    private readonly path: string,
    private readonly key: string,
  ) {}

  start(): this {
    this.connect();
    return this;
  }

  private connect(): void {
    if (this.stopped) return;
    this.connections++;
    let buffer = '';
    let frame: { id?: string; event?: string } = {};
    let hasData = false;
    let retried = false;
    const retry = () => {
      if (retried || this.stopped) return;
      retried = true;
      setTimeout(() => this.connect(), 200);
    };
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}` };
    if (this.lastId !== undefined) headers['last-event-id'] = this.lastId;
    const req = request(`${this.base()}${this.path}`, { headers }, (res) => {
      this.current = res;
      if (res.statusCode !== 200) {
        this.refused.push(res.statusCode ?? 0);
        res.resume();
        res.on('end', retry);
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          const line = buffer.slice(0, nl).replace(/\r$/, '');
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (hasData && frame.event !== 'ping') {
              this.frames.push(frame);
              if (frame.id !== undefined) this.lastId = frame.id;
            }
            frame = {};
            hasData = false;
            continue;
          }
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') frame.id = value;
          else if (field === 'event') frame.event = value;
          else if (field === 'data') hasData = true;
        }
      });
      res.on('close', retry);
      res.on('error', () => undefined);
    });
    req.on('error', retry);
    req.end();
  }

  stop(): void {
    this.stopped = true;
    this.current?.destroy();
  }
}

/** A Temporal dev server of our own (in memory): kill -9 and start again is a restart with its state lost. */
class OwnTemporal {
  private child?: ChildProcess;
  output = '';
  constructor(readonly port: number) {}
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    const bin = process.env.MANGO_TEMPORAL_BIN;
    if (!bin) throw new Error('MANGO_TEMPORAL_BIN is not set: eval "$(bash tools/ci/services.sh env)"');
    this.child = spawn(
      bin,
      [
        'server',
        'start-dev',
        '--headless',
        '--ip',
        '127.0.0.1',
        '--port',
        String(this.port),
        '--http-port',
        '0',
        '--metrics-port',
        '0',
        '--log-level',
        'warn',
        '--dynamic-config-value',
        'system.enableActivityEagerExecution=true',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child.stdout!.on('data', (d) => (this.output += String(d)));
    this.child.stderr!.on('data', (d) => (this.output += String(d)));
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const c = await Connection.connect({ address: this.address, connectTimeout: 1000 });
        await c.workflowService.getSystemInfo({});
        await c.close();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`temporal did not start: ${String(err)}\n${this.output}`);
        await sleep(300);
      }
    }
  }
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * A PostgreSQL cluster of our own (a temporary data directory, a free port): the matrix stops and starts
 * it, so it must never be the shared one other suites use. Runs as the `postgres` user like
 * tools/ci/services.sh, without fsync (a test database).
 */
class OwnPostgres {
  private readonly bin = '/usr/lib/postgresql/15/bin';
  private dir = '';
  constructor(readonly port: number) {}
  get adminUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }
  private async ctl(...args: string[]): Promise<void> {
    await run('runuser', ['-u', 'postgres', '--', `${this.bin}/pg_ctl`, '-D', `${this.dir}/data`, ...args]);
  }
  async init(): Promise<void> {
    this.dir = await mkdtemp(join(tmpdir(), 'mango-faults-pg-'));
    await chmod(this.dir, 0o755);
    await mkdir(`${this.dir}/sock`);
    await chown(this.dir, ...(await postgresIds()));
    await chown(`${this.dir}/sock`, ...(await postgresIds()));
    await run('runuser', [
      '-u',
      'postgres',
      '--',
      `${this.bin}/initdb`,
      '-D',
      `${this.dir}/data`,
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
      '--locale=C.UTF-8',
      '--no-sync',
    ]);
    await this.start();
  }
  async start(): Promise<void> {
    const opts = `-c listen_addresses=127.0.0.1 -p ${this.port} -k ${this.dir}/sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
    await this.ctl('-l', `${this.dir}/postgres.log`, '-w', '-t', '60', '-o', opts, 'start');
  }
  /** A fast shutdown: every client connection is closed, new ones are refused until start(). */
  async stop(): Promise<void> {
    await this.ctl('-m', 'fast', '-w', '-t', '60', 'stop');
  }
  async destroy(): Promise<void> {
    if (!this.dir) return;
    await this.stop().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** A versitygw S3 gateway of our own (POSIX backend in a temporary directory): kill -9 and start again. */
class OwnS3 {
  private child?: ChildProcess;
  private dir = '';
  output = '';
  readonly accessKey = `faults${randomBytes(6).toString('hex')}`;
  readonly secretKey = `s3-faults-${randomBytes(16).toString('hex')}`;
  constructor(readonly port: number) {}
  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    if (!this.dir) {
      this.dir = await mkdtemp(join(tmpdir(), 'mango-faults-s3-'));
      await mkdir(`${this.dir}/data`);
      await mkdir(`${this.dir}/meta`);
    }
    const cache =
      process.env.MANGO_SERVICES_CACHE ?? join(process.env.HOME ?? '/root', '.cache/mango-services');
    const bin = process.env.MANGO_VERSITYGW_BIN ?? join(cache, 'bin/versitygw');
    // The secret key goes by environment, not argv (the canary reads no process table, but ps would).
    this.child = spawn(
      bin,
      [
        '--region',
        'us-east-1',
        '--port',
        `127.0.0.1:${this.port}`,
        '--health',
        '/health',
        '--quiet',
        // As the test stack and compose run it (and as S3 behaves): connections are kept alive, so a kill -9
        // also finds apps/files holding pooled sockets to the store.
        '--keep-alive',
        'posix',
        '--sidecar',
        `${this.dir}/meta`,
        `${this.dir}/data`,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ROOT_ACCESS_KEY: this.accessKey, ROOT_SECRET_KEY: this.secretKey },
      },
    );
    this.child.stdout!.on('data', (d) => (this.output += String(d)));
    this.child.stderr!.on('data', (d) => (this.output += String(d)));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const up = await fetch(`${this.endpoint}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) return;
      if (Date.now() > deadline) throw new Error(`versitygw did not start:\n${this.output}`);
      await sleep(200);
    }
  }
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
  async destroy(): Promise<void> {
    await this.kill();
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}

/**
 * A dockerd of our own for the dockerd restart rows (its own run directory, socket, exec-root, pidfile and
 * data-root, no bridge, like tools/ci/services.sh starts one): the matrix's own daemon may be a shared one
 * (MANGO_FAULTS_SHARED=1) that must never be restarted, so these rows always restart a daemon they own.
 * Its data-root (`$MANGO_SERVICES_CACHE/docker-faults-dockerd`) keeps the sandbox image between runs; two
 * daemons on one data-root deadlock, so only one matrix run at a time may run these rows.
 */
class OwnDockerd {
  private child?: ChildProcess;
  private run = '';
  private cache =
    process.env.MANGO_SERVICES_CACHE ?? join(process.env.HOME ?? '/root', '.cache/mango-services');
  readonly dataRoot = join(this.cache, 'docker-faults-dockerd');
  liveRestore = false;
  output = '';
  get socket(): string {
    return `${this.run}/docker.sock`;
  }
  get host(): string {
    return `unix://${this.socket}`;
  }
  client(): Docker {
    return new Docker({ socketPath: this.socket });
  }
  async start(): Promise<void> {
    if (!this.run) this.run = await mkdtemp('/tmp/mango-fdd-');
    await mkdir(this.dataRoot, { recursive: true });
    this.child = spawn(
      'dockerd',
      [
        '--data-root',
        this.dataRoot,
        '--exec-root',
        `${this.run}/dx`,
        '-H',
        this.host,
        '--pidfile',
        `${this.run}/dockerd.pid`,
        '--bridge=none',
        '--iptables=false',
        '--ip6tables=false',
        '--ip-forward=false',
        '--ip-masq=false',
        '--userland-proxy=false',
        '--storage-driver=overlay2',
        '--log-level=warn',
        ...(this.liveRestore ? ['--live-restore'] : []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child.stdout!.on('data', (d) => (this.output += String(d)));
    this.child.stderr!.on('data', (d) => (this.output += String(d)));
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (
        await this.client()
          .ping()
          .then(
            () => true,
            () => false,
          )
      )
        return;
      if (this.child.exitCode !== null || Date.now() > deadline)
        throw new Error(`dockerd did not start:\n${this.output.slice(-3000)}`);
      await sleep(200);
    }
  }
  /** The sandbox image, imported once into the data-root (seconds from the cached tarball). */
  async ensureImage(image: string): Promise<void> {
    const have = await this.client()
      .getImage(image)
      .inspect()
      .then(
        () => true,
        () => false,
      );
    if (have) return;
    await execFileAsync('bash', [join(ROOT, 'tools/docker/sandbox-image.sh'), image], {
      env: { ...process.env, DOCKER_HOST: this.host },
      maxBuffer: 16 * 1024 * 1024,
    });
  }
  /** `systemctl restart docker`: SIGTERM, wait for its exit (it stops or leaves its containers), start. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    await exited;
    clearTimeout(timer);
  }
  async destroy(): Promise<void> {
    if (this.child && this.child.exitCode === null) {
      // Its containers first (a live-restore daemon would leave them running).
      const docker = this.client();
      for (const c of await docker.listContainers({ all: true }).catch(() => []))
        await docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined);
      const { Volumes } = await docker.listVolumes().catch(() => ({ Volumes: [] }));
      for (const v of Volumes ?? [])
        await docker
          .getVolume(v.Name)
          .remove({ force: true })
          .catch(() => undefined);
      await this.stop();
    }
    if (this.run) {
      // Mounts under its exec-root (netns, containerd state) go before the directory.
      const mounts = readFileSync('/proc/mounts', 'utf8')
        .split('\n')
        .map((l) => l.split(' ')[1] ?? '')
        .filter((m) => m.startsWith(`${this.run}/`))
        .sort()
        .reverse();
      for (const m of mounts) await run('umount', ['-l', m]).catch(() => undefined);
      await rm(this.run, { recursive: true, force: true }).catch(() => undefined);
    }
  }
}

/** A multipart upload of one file sent in pieces with a pause between them (the fault lands mid-body). */
function slowUpload(
  url: string,
  key: string,
  bytes: Buffer,
  opts: { pieces: number; delayMs: number; onSent?: (i: number) => Promise<void> | void },
): Promise<{ status: number; body: any }> {
  const boundary = `----faults${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const size = Math.ceil(body.length / opts.pieces);
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/files`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: any = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: kept as text for the failure message
          }
          resolve({ status: res.statusCode!, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(60_000, () => req.destroy(new Error('no answer within 60 s')));
    void (async () => {
      for (let i = 0; i * size < body.length; i++) {
        if (req.destroyed) return;
        if (!req.write(body.subarray(i * size, (i + 1) * size)))
          await new Promise((r) => req.once('drain', r));
        await opts.onSent?.(i);
        if (opts.delayMs) await sleep(opts.delayMs);
      }
      req.end();
    })().catch(reject);
  });
}

/** The two versions of a Memory row's Memory: whole, each several KiB, so a half-written one shows. */
const memoryVersion = (which: 'old' | 'new', tag: string) =>
  `${which} version of ${tag}\n${`${which} `.repeat(2048)}\nend of the ${which} version\n`;

const execFileAsync = promisify(execFile);
async function run(cmd: string, args: string[]): Promise<string> {
  // postgres may not be able to enter the caller's directory.
  return (await execFileAsync(cmd, args, { cwd: '/' })).stdout;
}
async function postgresIds(): Promise<[number, number]> {
  const uid = Number((await run('id', ['-u', 'postgres'])).trim());
  const gid = Number((await run('id', ['-g', 'postgres'])).trim());
  return [uid, gid];
}

interface Row {
  fault: string;
  lost: number;
  duplicated: number;
  toolsRunTwice: number;
  recoverySeconds: number;
  note: string;
}

describe('fault matrix (real API, orchestrator, supervisor + container, Temporal, Toxiproxy)', () => {
  let api: ApiUnderTest;
  let apiProc: AppProcess;
  let apiEnv: Record<string, string>;
  /** apps/api's /metrics port (the soak reads its V8 heap and external memory there). */
  let apiMetricsPort: number;
  /** apps/orchestrator's /metrics port (the PostgreSQL rows read its background loops' state there). */
  let orchestratorMetricsPort: number;
  let model: ScriptedModelServer;
  let temporal: OwnTemporal;
  let postgres: OwnPostgres;
  let docker: Docker;
  let orchestrator: AppProcess;
  let orchestratorEnv: Record<string, string>;
  let supervisor: AppProcess;
  let supervisorEnv: Record<string, string>;
  let toxiproxy: Toxiproxy;
  /** The dockerd restart rows' own daemon (never the matrix's, which may be shared). */
  const ownDockerd = new OwnDockerd();
  let link: ToxiproxyLink;
  let ws: HttpClient;
  let wsKey: string;
  let envId: string;
  let agentId: string;
  let chatAgentId: string;
  let streamed: { id: string; client: ResumingClient };
  const clients: ResumingClient[] = [];
  const rows: Row[] = [];
  /** Every credential this run creates or hands out: none may appear in logs, histories or events. */
  const secrets = new Map<string, string>();
  /** Output of processes that were killed and replaced (their logs count for the canary too). */
  const deadLogs: string[] = [];
  const modelKey = `sk-faults-model-${randomBytes(12).toString('hex')}`;
  const vaultKeyring = `kA:${randomBytes(32).toString('base64')}`;
  const webhookKey = randomBytes(32).toString('base64');

  const startOrchestrator = () =>
    startApp('apps/orchestrator/src/main.ts', orchestratorEnv, logged('temporal worker running'), 120_000);
  const startSupervisor = () =>
    startApp('apps/supervisor/src/main.ts', supervisorEnv, logged('docker engine connected'), 120_000);
  /** libfaketime: the wall clock moved, timers (the monotonic clock) real. */
  const SKEWED_CLOCK = {
    LD_PRELOAD: '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
    FAKETIME: '+1h',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
  /** An orderly restart of an idle supervisor (SIGTERM: it stops its idle activations), with extra env. */
  const restartSupervisor = async (extra: Record<string, string>) => {
    await supervisor.stop('SIGTERM');
    // After its stop: what it said while draining counts for the canary (and the dockerd rows) too.
    deadLogs.push(supervisor.logs());
    supervisor = await startApp(
      'apps/supervisor/src/main.ts',
      { ...supervisorEnv, ...extra },
      logged('docker engine connected'),
      120_000,
    );
  };
  const startApiProcess = () =>
    startApp('apps/api/src/main.ts', apiEnv, answers(`${api.url}/healthz`), 120_000);

  beforeAll(async () => {
    // Our own PostgreSQL: the matrix restarts and stops it (never the shared one of other suites).
    postgres = new OwnPostgres(await freePort());
    await postgres.init();
    process.env.MANGO_PG_ADMIN_URL = postgres.adminUrl;
    temporal = new OwnTemporal(await freePort());
    await temporal.start();
    model = await startScriptedModel();
    // The model: a "slow" request calls bash once; a tool result is answered with its text; chat is echoed.
    let n = 0;
    const route = (body: any) => {
      const last = body.messages.at(-1);
      const block = last.content[0];
      if (block.type === 'tool_result') {
        const text = typeof block.content === 'string' ? block.content : block.content[0].text;
        return { content: [{ type: 'text', text: `tool said: ${text}` }] };
      }
      const text: string = block.text ?? '';
      const quick = /^quick (\S+)/.exec(text)?.[1];
      if (quick)
        return {
          content: [
            { type: 'tool_use', id: `toolu_${++n}`, name: 'bash', input: { command: `echo quick ${quick}` } },
          ],
          stop_reason: 'tool_use',
        };
      // A Memory row: the tool writes the new version of the Store's one Memory (then the runner syncs it).
      const memo = /^memo (\S+)/.exec(text)?.[1];
      if (memo)
        return {
          content: [
            {
              type: 'tool_use',
              id: `toolu_${++n}`,
              name: 'write',
              input: { file_path: `/mnt/memory/notes-${memo}/state.md`, content: memoryVersion('new', memo) },
            },
          ],
          stop_reason: 'tool_use',
        };
      // The Skill row: the tool reads the staged Skill (staging happens before any tool runs).
      const skill = /^skill (\S+)/.exec(text)?.[1];
      if (skill)
        return {
          content: [
            {
              type: 'tool_use',
              id: `toolu_${++n}`,
              name: 'read',
              input: { file_path: `/workspace/skills/faultnotes-${skill}/SKILL.md` },
            },
          ],
          stop_reason: 'tool_use',
        };
      const tag = /^slow (\S+)/.exec(text)?.[1];
      if (tag)
        return {
          content: [
            {
              type: 'tool_use',
              id: `toolu_${++n}`,
              name: 'bash',
              input: {
                // Counts its starts and its finishes in the Session workspace (which outlives containers).
                command: `echo run >> /workspace/runs-${tag}; sleep ${TOOL_SECONDS}; echo done >> /workspace/done-${tag}; echo "runs=$(wc -l < /workspace/runs-${tag}) finished=$(wc -l < /workspace/done-${tag})"`,
              },
            },
          ],
          stop_reason: 'tool_use',
        };
      return { content: [{ type: 'text', text: `echo: ${text}` }] };
    };
    model.script(...Array.from({ length: 5000 }, () => route));

    apiMetricsPort = await freePort();
    api = await startApi('faults', {
      ...API_INSPECTOR,
      MANGO_METRICS_PORT: String(apiMetricsPort),
      MANGO_VAULT_KEYRING: vaultKeyring,
      MANGO_WEBHOOK_SECRETS_KEY: webhookKey,
      MANGO_LOG_LEVEL: 'info',
    });
    apiProc = api.app;
    apiEnv = {
      MANGO_DATABASE_URL: api.db.url,
      MANGO_API_PORT: new URL(api.url).port,
      MANGO_LOG_LEVEL: 'info',
      MANGO_DB_POOL_SIZE: '5',
      ...API_INSPECTOR,
      MANGO_METRICS_PORT: String(apiMetricsPort),
      MANGO_VAULT_KEYRING: vaultKeyring,
      MANGO_WEBHOOK_SECRETS_KEY: webhookKey,
    };
    wsKey = (await api.issueKey('wrkspc_default')).api_key;
    secrets.set('workspace API key', wsKey);
    ws = httpClient(api.url, wsKey);
    envId = (await ws.post('/v1/environments', { name: 'faults-pool' })).body.id;
    const envKey = (await api.issueKey('wrkspc_default', envId)).api_key;
    secrets.set('environment key', envKey);
    agentId = (
      await ws.post('/v1/agents', { name: 'slow', model: 'm', tools: [{ type: 'agent_toolset_20260401' }] })
    ).body.id;
    chatAgentId = (await ws.post('/v1/agents', { name: 'chat', model: 'm' })).body.id;

    orchestratorMetricsPort = await freePort();
    orchestratorEnv = {
      MANGO_METRICS_PORT: String(orchestratorMetricsPort),
      MANGO_DATABASE_URL: api.db.url,
      MANGO_TEMPORAL_ADDRESS: temporal.address,
      MANGO_TASK_QUEUE: `faults-${Date.now()}`,
      MANGO_MODEL_BASE_URL: model.url,
      MANGO_MODEL_API_KEY: modelKey,
      MANGO_LOG_LEVEL: 'info',
      MANGO_SESSION_SWEEP_SECONDS: String(SWEEP_SECONDS),
      MANGO_VAULT_KEYRING: vaultKeyring,
      MANGO_WEBHOOK_SECRETS_KEY: webhookKey,
    };
    secrets.set('model key', modelKey);
    orchestrator = await startOrchestrator();

    toxiproxy = await startToxiproxy();
    link = await toxiproxy.link('worker-api', api.url.replace('http://', ''));
    supervisorEnv = {
      MANGO_ENVIRONMENT_KEY: envKey,
      MANGO_ENVIRONMENT_ID: envId,
      MANGO_BASE_URL: link.url,
      DOCKER_HOST: process.env.DOCKER_HOST!,
      MANGO_WORKER_IMAGE: process.env.MANGO_BASE_IMAGE!,
      MANGO_WORKER_SOURCE_DIR: ROOT,
      MANGO_SUPERVISOR_ID: `faults-${envId.toLowerCase()}`,
      MANGO_SESSION_IDLE_MS: '60000',
      // Each row's activation holds a slot until its Session has been idle for MANGO_SESSION_IDLE_MS; with the
      // default 4 slots, the rows just before (adopted after the supervisor kill included) kept a new row's
      // Work waiting ~60 s for a slot, past `commandRunning`'s bound. The rows are about faults, not slots.
      MANGO_MAX_CONCURRENT_ITEMS: '12',
      MANGO_WORK_TTL_SECONDS: String(TTL_SECONDS),
      MANGO_MODEL_API_KEY: modelKey,
    };
    supervisor = await startSupervisor();
    docker = new Docker({ socketPath: new URL(process.env.DOCKER_HOST!).pathname });

    // The second Session, streamed over SSE for the whole matrix (straight to the API: it lives through
    // every API kill by resuming with Last-Event-ID).
    const chat = (await ws.post('/v1/sessions', { agent: chatAgentId, environment_id: envId })).body.id;
    streamed = {
      id: chat,
      client: new ResumingClient(() => api.url, `/v1/sessions/${chat}/events/stream`, wsKey).start(),
    };
    clients.push(streamed.client);
  }, 600_000);

  afterAll(async () => {
    for (const c of clients) c.stop();
    await supervisor?.stop().catch(() => undefined);
    await orchestrator?.stop().catch(() => undefined);
    await toxiproxy?.stop().catch(() => undefined);
    await model?.close();
    if (apiProc && apiProc !== api?.app) await apiProc.stop();
    await api?.close();
    await temporal?.kill();
    await postgres?.destroy();
    await ownDockerd.destroy().catch(() => undefined);
    // Item containers and Session workspace volumes of this run's supervisor (they outlive it by design).
    if (supervisorEnv && docker) {
      const label = [`dev.mango.supervisor=${supervisorEnv.MANGO_SUPERVISOR_ID}`];
      for (const c of await docker.listContainers({ all: true, filters: { label } }))
        await docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined);
      const { Volumes } = await docker.listVolumes({ filters: { label } });
      for (const v of Volumes ?? [])
        await docker
          .getVolume(v.Name)
          .remove({ force: true })
          .catch(() => undefined);
    }
    // The table, also when a fault failed (docs/testing.md "Fault matrix").
    const table = [
      '| fault | events lost | duplicated | tools run twice | recovery s | note |',
      '| --- | --- | --- | --- | --- | --- |',
      ...rows.map(
        (r) =>
          `| ${r.fault} | ${r.lost} | ${r.duplicated} | ${r.toolsRunTwice} | ${r.recoverySeconds.toFixed(1)} | ${r.note} |`,
      ),
    ].join('\n');
    process.stdout.write(`\nFault matrix\n${table}\n`);
  });

  const events = async (id: string): Promise<Ev[]> =>
    (await ws.get(`/v1/sessions/${id}/events?limit=1000`)).body.data;

  async function until(id: string, pred: (e: Ev[]) => boolean, ms: number): Promise<Ev[]> {
    const deadline = Date.now() + ms;
    for (;;) {
      const list = await events(id).catch(() => [] as Ev[]);
      if (pred(list) || Date.now() > deadline) return list;
      await sleep(250);
    }
  }

  /** The log straight from PostgreSQL (the API may be down), in sequence order. */
  /** Waits until the Session has idled `n` times (each turn ends with one `session.status_idle`). */
  const untilIdle = (id: string, n: number) =>
    until(id, (l) => l.filter((e) => e.type === 'session.status_idle').length >= n, 120_000);
  const logOf = (id: string) =>
    api.sql<{ seq: string; type: string; id: string; tool_use_id: string | null }>(
      'SELECT seq::text AS seq, type, id, tool_use_id FROM session_events WHERE session_id = $1 ORDER BY session_events.seq',
      [id],
    );

  /** Lost and duplicated events: the log's gaps, and what an SSE client missed or saw twice. */
  async function sseTally(
    id: string,
    client: ResumingClient,
  ): Promise<{ lost: number; duplicated: number; detail: string }> {
    const log = await logOf(id);
    const last = log.at(-1)?.seq;
    const deadline = Date.now() + 30_000;
    while (client.frames.at(-1)?.id !== last && Date.now() < deadline) await sleep(200);
    const gaps = log.filter((e, i) => Number(e.seq) !== i + 1).length;
    const seen = new Map<string, number>();
    for (const f of client.frames) if (f.id) seen.set(f.id, (seen.get(f.id) ?? 0) + 1);
    const lost = gaps + log.filter((e) => !seen.has(e.seq)).length;
    const duplicated = [...seen.values()].reduce((n, c) => n + c - 1, 0);
    const detail = `log ${log.length} (last ${last}), streamed ${client.frames.length} (last ${client.frames.at(-1)?.id}), ${client.connections} connections, refused [${client.refused.slice(-5).join(',')}]`;
    return { lost, duplicated, detail };
  }

  /** The Session's running container, once the tool's command is a process in it. */
  async function commandRunning(sessionId: string, engine: Docker = docker): Promise<Docker.Container> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [c] = await engine.listContainers({
        filters: { label: [`dev.mango.session_id=${sessionId}`], status: ['running'] },
      });
      const container = c && engine.getContainer(c.Id);
      const top = container && (await container.top().catch(() => undefined));
      if (container && JSON.stringify(top?.Processes ?? []).includes(`sleep ${TOOL_SECONDS}`))
        return container;
      if (Date.now() > deadline) throw new Error(`the tool never ran in a container of ${sessionId}`);
      await sleep(100);
    }
  }

  const FAULTS: Array<{
    name: string;
    note: string;
    /**
     * Seconds after the later of the fault's end and the tool's end within which the turn must be idle:
     * lease TTL + 10 s, unless the fault is documented not to meet that bar (docs/testing.md).
     */
    boundSeconds?: number;
    /**
     * How often the tool may start (default [1]). A call whose container died mid-command is started again
     * by the next activation (documented: docs/operator-guide.md, The Docker supervisor); it finishes once.
     */
    starts?: number[];
    /**
     * How often the command may finish (default [1]). Only where the docs say a stale run can complete
     * (a wedged worker's container thawed by its removal: fencing refuses its result, not its side effects).
     */
    finishes?: number[];
    /** Log lines a process must write (again) between the fault and the turn's end: it says it recovered. */
    says?: Array<['orchestrator' | 'supervisor', string]>;
    /**
     * Background loops of the orchestrator that must report their recovery in its metrics between the
     * fault and the turn's end: `mango_background_loop_recoveries_total` up, `mango_background_loop_failing` 0.
     */
    recovers?: string[];
    /** Log lines a process must not write between the fault and the turn's end. */
    saysNot?: Array<['orchestrator' | 'supervisor', string]>;
    /** Injects the fault; resolves when it has ended (the replaced process is ready, the link is back). */
    inject: (sessionId: string) => Promise<void>;
    /** A condition set up before the row's Session starts, and undone after it (e.g. a skewed clock). */
    before?: () => Promise<void>;
    after?: () => Promise<void>;
  }> = [
    {
      name: 'duplicate delivery of outbox rows and signals',
      note: 'every outbox row of both Sessions re-relayed twice, and every signal re-sent by hand',
      inject: async (sessionId) => {
        const c = await Connection.connect({ address: temporal.address });
        try {
          const handle = new Client({ connection: c }).workflow.getHandle(sessionId);
          for (let i = 0; i < 2; i++) {
            await api.sql('UPDATE outbox SET dispatched_at = NULL WHERE session_id = ANY($1)', [
              [sessionId, streamed.id],
            ]);
            const rows = await api.sql<{ seq: string; kind: string }>(
              'SELECT event_seq::text AS seq, kind FROM outbox WHERE session_id = $1',
              [sessionId],
            );
            for (const r of rows) await handle.signal('input', { seq: Number(r.seq), kind: r.kind });
            await sleep(1500);
          }
        } finally {
          await c.close();
        }
      },
    },
    {
      name: 'kill -9 apps/api',
      // Measured 50–85 s on a loaded 2-core machine: TTL + 10 s is not met yet (docs/testing.md, Fault matrix).
      boundSeconds: 120,
      note: 'restarted on the same port at once',
      inject: async () => {
        deadLogs.push(apiProc.logs());
        await apiProc.stop('SIGKILL');
        await sleep(1000);
        apiProc = await startApiProcess();
      },
    },
    {
      name: 'kill -9 apps/orchestrator',
      note: 'restarted at once',
      inject: async () => {
        deadLogs.push(orchestrator.logs());
        await orchestrator.stop('SIGKILL');
        await sleep(1000);
        orchestrator = await startOrchestrator();
      },
    },
    {
      name: 'Temporal restart, its state lost',
      note: 'in-memory dev server killed and started again: the workflow is rebuilt from the log',
      inject: async () => {
        await temporal.kill();
        await sleep(1000);
        await temporal.start();
      },
    },
    {
      name: 'worker↔API network cut 20 s (Toxiproxy)',
      // Measured 50–85 s on a loaded 2-core machine: TTL + 10 s is not met yet (docs/testing.md, Fault matrix).
      boundSeconds: 120,
      note: 'supervisor upstream disabled, then enabled',
      inject: async () => {
        await link.setEnabled(false);
        await sleep(20_000);
        await link.setEnabled(true);
      },
    },
    {
      name: 'kill -9 the supervisor',
      // 1.8 s alone since the adoption (50–85 s before, when the container was removed): TTL + 10 s holds.
      note: 'a new supervisor (same id) started at once: it adopts the running container',
      // The new supervisor adopts the running container its predecessor left (docs/operator-guide.md,
      // Supervisor restarts): the runner's retries reach the socket served again, the command runs once.
      starts: [1],
      says: [['supervisor', 'adopted a running container left by an earlier run']],
      inject: async (sessionId) => {
        // Mid-tool: once the command runs in the Session's container (the model's tool_use can be logged
        // before the container started; a container killed before its runner got its secret is removed).
        await commandRunning(sessionId);
        deadLogs.push(supervisor.logs());
        await supervisor.stop('SIGKILL');
        await sleep(1000);
        supervisor = await startSupervisor();
      },
    },
    {
      name: 'kill -9 the item container',
      note: 'docker kill while the command runs: the supervisor stops the Work, the next activation re-runs the call',
      starts: [2],
      says: [['supervisor', 'item container was killed mid-activation']],
      inject: async (sessionId) => {
        // Killed while the command runs (its `sleep` is a process in the Session's container), not before
        // the container or the command started (the model's tool_use can be logged before either).
        await (await commandRunning(sessionId)).kill({ signal: 'SIGKILL' });
      },
    },
    {
      name: 'lease expiry mid-tool, a second worker claiming',
      // The lease runs out TTL s after the wedged worker's last heartbeat; the second worker then runs the
      // call again from the start (TOOL_SECONDS), so the bar is TTL + the tool's own time + 45 s. Alone on a
      // quiet machine it recovers in about 46 s; beside npm test in CI (.ci/run) one run took 82 s (the
      // second supervisor's start, the reclaim and a cold container on two loaded cores), past a + 20 s bar.
      boundSeconds: TTL_SECONDS + TOOL_SECONDS + 45,
      note: 'supervisor killed and its container paused mid-command (a wedged host); a supervisor with another id claims once the lease expires, removes the old container, runs the call again',
      starts: [2],
      // Docker removes a paused container by sending SIGKILL to its init and thawing it: the shell, thawed
      // with its `sleep` long over, can write its finish mark before the namespace dies. The stale run's
      // result is refused (its token died with the lease); its side effects are not fenced
      // (docs/operator-guide.md "Lease loss"). The re-run always finishes and is the one answer.
      finishes: [1, 2],
      inject: async (sessionId) => {
        const old = await commandRunning(sessionId);
        deadLogs.push(supervisor.logs());
        await supervisor.stop('SIGKILL');
        await pauseContainer(old);
        supervisor = await startApp(
          'apps/supervisor/src/main.ts',
          { ...supervisorEnv, MANGO_SUPERVISOR_ID: `${supervisorEnv.MANGO_SUPERVISOR_ID}-second` },
          logged('docker engine connected'),
          120_000,
        );
      },
      // The matrix's own supervisor again (the second one drains on SIGTERM).
      after: () => restartSupervisor({}),
    },
    {
      name: 'clock skew: the supervisor 1 h ahead of the API',
      note: 'supervisor restarted idle under libfaketime (+1 h wall clock, real monotonic clock) for the whole turn; the item container shares the host kernel clock',
      before: async () => {
        await restartSupervisor(SKEWED_CLOCK);
        // The skew really took: the supervisor's own log timestamps are an hour ahead.
        const times = [...supervisor.logs().matchAll(/"time":"([^"]+)"/g)].map((m) => Date.parse(m[1]!));
        expect(Math.max(...times) - Date.now()).toBeGreaterThan(50 * 60_000);
      },
      inject: async () => {
        await sleep(1000);
      },
      after: () => restartSupervisor({}),
    },
    {
      name: 'PostgreSQL restart',
      note: 'pg_ctl stop -m fast (every connection closed), then start',
      says: [['orchestrator', 'outbox listener reconnected']],
      inject: async () => {
        await postgres.stop();
        await sleep(1000);
        await postgres.start();
      },
    },
    {
      name: 'PostgreSQL unreachable 30 s',
      // Measured 39.8 s alone and 97.8 s in a full run on the loaded 2-core machine: TTL + 10 s is not met
      // yet (docs/testing.md, Fault matrix).
      boundSeconds: 120,
      note: 'stopped for 30 s (connections closed, new ones refused), then started',
      says: [
        ['orchestrator', 'outbox listener reconnected'],
        ['orchestrator', 'outbox relay recovered'],
        ['orchestrator', 'webhook relay recovered'],
        ['orchestrator', 'session sweeper recovered'],
      ],
      recovers: ['outbox_relay', 'webhook_relay', 'session_sweeper'],
      inject: async () => {
        await postgres.stop();
        await sleep(30_000);
        await postgres.start();
      },
    },
  ];

  /**
   * The dockerd restart rows run last, after the files block (their own describe below): in CI the row
   * after them (PostgreSQL restart) twice missed its bound by a few seconds while it ran right after them.
   */
  const DOCKERD_FAULTS: typeof FAULTS = [false, true].map((liveRestore) => ({
    name: liveRestore ? 'dockerd restart with --live-restore' : 'dockerd restart',
    note: liveRestore
      ? "the supervisor's own dockerd restarted (SIGTERM, start) with --live-restore: the container outlives it"
      : "the supervisor's own dockerd restarted (SIGTERM, start): it stops its containers on the way down",
    // Without live-restore the daemon stops the item's container on its way down (SIGTERM, 10 s: the
    // runner drains, finishing and posting the call in flight when it can; a call that outlasts the
    // 10 s is killed, exit 137, and the next activation runs it again); with live-restore the container
    // keeps running and only the supervisor's Docker streams break (docs/testing.md, Fault matrix).
    starts: liveRestore ? [1] : [1, 2],
    says: liveRestore
      ? [['supervisor', 'docker engine is back: the item goes on'] as ['supervisor', string]]
      : [],
    // The Session's next activation may be claimed while the daemon is down: it waits for the engine.
    saysNot: [['supervisor', 'item launch failed'] as ['supervisor', string]],
    before: async () => {
      ownDockerd.liveRestore = liveRestore;
      await ownDockerd.restart();
      await ownDockerd.ensureImage(process.env.MANGO_BASE_IMAGE!);
      await restartSupervisor({ DOCKER_HOST: ownDockerd.host });
    },
    inject: async (sessionId: string) => {
      await commandRunning(sessionId, ownDockerd.client());
      // Down for 5 s between its stop and its start (a restart on a busy host takes seconds): longer
      // than the supervisor's 2 s container watch, so it sees the engine go and come back.
      await ownDockerd.stop();
      await sleep(5000);
      await ownDockerd.start();
    },
    after: async () => {
      // The supervisor still watches the item's container (its wait request died with the daemon): an
      // orderly stop drains it at once, not after the 5-minute shutdown grace.
      const stopping = Date.now();
      await restartSupervisor({});
      const drained =
        /draining: waiting for running items to finish[\s\S]*?item container finished and was removed/.test(
          deadLogs.at(-1)!,
        );
      process.stdout.write(
        `[faults] ${liveRestore ? 'dockerd restart with --live-restore' : 'dockerd restart'}: the supervisor restarted on the matrix's daemon in ${((Date.now() - stopping) / 1000).toFixed(1)} s (drained an item: ${drained})\n`,
      );
      expect(Date.now() - stopping).toBeLessThan(90_000);
    },
  }));

  /** One row: its set-up, the fault with the matrix's assertions (runRow), its tear-down. */
  const runFault = async (_name: string, fault: (typeof FAULTS)[number]) => {
    const tag = `f${rows.length}`;
    await fault.before?.();
    const marks = rowLogMarks();
    try {
      await runRow(tag, fault);
    } catch (err) {
      dumpRowLogs(fault.name, marks);
      throw err;
    } finally {
      await fault.after?.();
    }
  };

  /** Where each process's output stands when a row begins (see {@link dumpRowLogs}). */
  const rowLogMarks = () => ({
    api: { proc: apiProc, at: apiProc.logs().length },
    orchestrator: { proc: orchestrator, at: orchestrator.logs().length },
    supervisor: { proc: supervisor, at: supervisor.logs().length },
  });

  /**
   * A failed row leaves its processes' output since the row began under tmp/faults-logs/ and prints their
   * warnings and errors: a CI run keeps only what was printed (one landing's PostgreSQL restart row missed
   * its bound by 5.6 s and nothing said why). A process replaced during the row counts from its start.
   */
  function dumpRowLogs(name: string, marks: ReturnType<typeof rowLogMarks>): void {
    const dir = join(ROOT, 'tmp/faults-logs');
    mkdirSync(dir, { recursive: true });
    const slug = name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
    const current = { api: apiProc, orchestrator, supervisor };
    for (const [proc, mark] of Object.entries(marks) as Array<
      [keyof typeof current, { proc: AppProcess; at: number }]
    >) {
      const now = current[proc];
      const text = now.logs().slice(now === mark.proc ? mark.at : 0);
      const file = join(dir, `${slug}.${proc}.log`);
      writeFileSync(file, text);
      const notable = text
        .split('\n')
        .filter((l) => /"level":"(warn|error|fatal)"/.test(l))
        .slice(-40);
      process.stdout.write(
        `[faults] ${name}: ${proc} output of the row in ${file}; its last warnings and errors:\n${notable.map((l) => `  ${l.slice(0, 600)}`).join('\n')}\n`,
      );
    }
  }
  const ROW_TITLE = '%s: nothing lost, nothing duplicated, each tool once, the turn finishes on its own';

  it.each(FAULTS.map((f) => [f.name, f] as const))(ROW_TITLE, runFault, 420_000);

  async function runRow(tag: string, fault: (typeof FAULTS)[number]): Promise<void> {
    const s = (
      await ws.post('/v1/sessions', {
        agent: agentId,
        environment_id: envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: `slow ${tag}` }] }],
      })
    ).body.id as string;
    const client = new ResumingClient(() => api.url, `/v1/sessions/${s}/events/stream`, wsKey).start();
    clients.push(client);
    // The streamed Session gets a message before the fault.
    await ws.post(`/v1/sessions/${streamed.id}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: `before ${tag}` }] }],
    });
    await until(s, (l) => l.some((e) => e.type === 'agent.tool_use'), 180_000);
    // The tool has started in its container when the item has posted nothing yet but is active: give it a moment.
    const toolStartedAt = Date.now();
    await sleep(1500);
    const logsOf = (proc: 'orchestrator' | 'supervisor') =>
      (proc === 'orchestrator' ? orchestrator : supervisor).logs();
    const count = (text: string, line: string) => text.split(line).length - 1;
    const saidBefore = (fault.says ?? []).map(([proc, line]) => count(logsOf(proc), line));
    const saidNotBefore = (fault.saysNot ?? []).map(([proc, line]) => count(logsOf(proc), line));
    const loops = async () => {
      if (!fault.recovers?.length) return [];
      const text = await fetch(`http://127.0.0.1:${orchestratorMetricsPort}/metrics`).then((r) => r.text());
      const value = (name: string, loop: string) =>
        Number(new RegExp(`^${name}\\{[^}]*loop="${loop}"[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
      return (fault.recovers ?? []).map((loop) => ({
        loop,
        recoveries: value('mango_background_loop_recoveries_total', loop),
        failing: value('mango_background_loop_failing', loop),
      }));
    };
    const loopsBefore = await loops();
    await fault.inject(s);
    const faultEndedAt = Date.now();
    await ws.post(`/v1/sessions/${streamed.id}/events`, {
      events: [{ type: 'user.message', content: [{ type: 'text', text: `after ${tag}` }] }],
    });
    const bound =
      Math.max(faultEndedAt, toolStartedAt + TOOL_SECONDS * 1000) +
      (fault.boundSeconds ?? TTL_SECONDS + 10) * 1000;
    const done = await until(s, (l) => l.some((e) => e.type === 'session.status_idle'), 240_000);
    const idleAt = Date.now();
    const uses = done.filter((e) => e.type === 'agent.tool_use');
    const results = done.filter((e) => e.type === 'user.tool_result');
    const runs = results.map((r) => Number(/runs=(\d+)/.exec(JSON.stringify(r.content))?.[1] ?? 0));
    const finished = results.map((r) => Number(/finished=(\d+)/.exec(JSON.stringify(r.content))?.[1] ?? 0));
    const tallyA = await sseTally(s, client);
    const logA = await logOf(s);
    const extraIdles = logA.filter((e) => e.type === 'session.status_idle').length - 1;
    const extraResults = results.length - uses.length;
    const row: Row = {
      fault: fault.name,
      lost: tallyA.lost,
      duplicated: tallyA.duplicated + Math.max(0, extraIdles) + Math.max(0, extraResults),
      toolsRunTwice: finished.filter((n) => n > 1).length,
      recoverySeconds: Math.max(
        0,
        (idleAt - Math.max(faultEndedAt, toolStartedAt + TOOL_SECONDS * 1000)) / 1000,
      ),
      note: fault.note,
    };
    // The streamed Session: both of its messages answered, every event streamed once so far.
    await until(
      streamed.id,
      (l) => l.filter((e) => e.type === 'session.status_idle').length >= 2 * (rows.length + 1),
      120_000,
    );
    const tallyB = await sseTally(streamed.id, streamed.client);
    row.lost += tallyB.lost;
    row.duplicated += tallyB.duplicated;
    rows.push(row);
    process.stdout.write(`[faults] ${fault.name}: A ${tallyA.detail}; B ${tallyB.detail}\n`);

    expect(done.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    expect(uses).toHaveLength(1);
    expect(results.map((r) => r.tool_use_id)).toEqual(uses.map((u) => u.id));
    expect(runs).toHaveLength(1);
    expect(fault.starts ?? [1]).toContain(runs[0]);
    expect(finished).toHaveLength(1);
    expect(fault.finishes ?? [1]).toContain(finished[0]);
    expect(done.find((e) => e.type === 'agent.message')?.content[0].text).toMatch(
      new RegExp(`^tool said: .*runs=${runs[0]} finished=${finished[0]}`, 's'),
    );
    expect({ ...row, a: tallyA.detail, b: tallyB.detail }).toMatchObject({
      lost: 0,
      duplicated: 0,
      // A documented second finish (see `finishes`) is still counted in the table's column.
      toolsRunTwice: (fault.finishes ?? [1]).includes(finished[0]!) ? row.toolsRunTwice : 0,
    });
    expect(idleAt).toBeLessThanOrEqual(bound);
    // A stream refused during the fault is a 503 with retry-after (the database is unreachable), never a 500.
    expect([...client.refused, ...streamed.client.refused].filter((status) => status === 500)).toEqual([]);
    // Every background loop that lost its dependency says it is back.
    const said = (fault.says ?? []).map(([proc, line], i) => ({
      proc,
      line,
      written: count(logsOf(proc), line) - saidBefore[i]!,
    }));
    expect(said.filter((l) => l.written < 1)).toEqual([]);
    const saidNot = (fault.saysNot ?? []).map(([proc, line], i) => ({
      proc,
      line,
      written: count(logsOf(proc), line) - saidNotBefore[i]!,
    }));
    expect(saidNot.filter((l) => l.written > 0)).toEqual([]);
    // …and its metrics say so too.
    const loopsAfter = await loops();
    expect(
      loopsAfter.map((l, i) => ({
        loop: l.loop,
        recovered: l.recoveries - loopsBefore[i]!.recoveries >= 1,
        failing: l.failing,
      })),
    ).toEqual((fault.recovers ?? []).map((loop) => ({ loop, recovered: true, failing: 0 })));
  }

  describe('files: its own S3 (versitygw) and apps/files on the same database', () => {
    const MIB = 1024 * 1024;
    const BUCKET = 'faults-files';
    let s3: OwnS3;
    let files: AppProcess;
    let filesEnv: Record<string, string>;
    let filesUrl: string;
    let store: ObjectStore;
    /** One base URL for api and files (as nginx in `npm run up`): the Memory rows' supervisor uses it. */
    let ingress: Awaited<ReturnType<typeof startIngress>>;
    /** A Memory or Skill row's hook on the ingress: the first request of its kind it sees lands the fault. */
    let holdRequest: ((method: string, url: string) => Promise<void> | void) | undefined;
    const startFilesProcess = () =>
      startApp('apps/files/src/main.ts', filesEnv, answers(`${filesUrl}/healthz`), 60_000);

    beforeAll(async () => {
      s3 = new OwnS3(await freePort());
      await s3.start();
      secrets.set('S3 secret key', s3.secretKey);
      filesUrl = `http://127.0.0.1:${await freePort()}`;
      filesEnv = {
        MANGO_DATABASE_URL: api.db.url,
        MANGO_FILES_PORT: new URL(filesUrl).port,
        MANGO_S3_ENDPOINT: s3.endpoint,
        MANGO_S3_ACCESS_KEY: s3.accessKey,
        MANGO_S3_SECRET_KEY: s3.secretKey,
        MANGO_S3_REGION: 'us-east-1',
        MANGO_S3_BUCKET: BUCKET,
        MANGO_LOG_LEVEL: 'info',
        // Parts of 5 MiB (S3's minimum), so a 12 MiB upload has a stored part when the fault lands; a short
        // upload lease and a sweeper every 500 ms without grace, so an abandoned upload is swept at once.
        MANGO_FILES_PART_BYTES: String(5 * MIB),
        MANGO_FILES_UPLOAD_LEASE_MS: '3000',
        MANGO_FILES_SWEEP_INTERVAL_MS: '500',
        MANGO_FILES_SWEEP_GRACE_MS: '0',
      };
      files = await startFilesProcess();
      store = new ObjectStore({
        endpoint: s3.endpoint,
        accessKey: s3.accessKey,
        secretKey: s3.secretKey,
        region: 'us-east-1',
        bucket: BUCKET,
      });
      ingress = await startIngress({
        apiUrl: api.url,
        filesUrl,
        beforeForward: (method, url) => holdRequest?.(method, url),
      });
    }, 180_000);

    afterAll(async () => {
      await ingress?.close();
      if (files) deadLogs.push(files.logs());
      await files?.stop().catch(() => undefined);
      if (s3) deadLogs.push(s3.output);
      await s3?.destroy();
    });

    /** Half-stored state: File rows whose object is missing; objects or unfinished uploads no File row names. */
    async function halfStored(): Promise<{ missing: string[]; orphans: string[] }> {
      // Files and Memories (their current versions and the versions' history) name objects.
      const rows = await api.sql<{ id: string; object_key: string }>(
        'SELECT id, object_key FROM files UNION ALL SELECT id, object_key FROM memories',
      );
      const versions = await api.sql<{ object_key: string }>(
        'SELECT object_key FROM memory_versions WHERE object_key IS NOT NULL',
      );
      const keys = new Set<string>();
      for await (const o of store.client.listObjectsV2(BUCKET, '', true)) if (o.name) keys.add(o.name);
      const incomplete = (await store.unfinishedUploads()).map((u) => u.key);
      const named = new Set([...rows, ...versions].map((r) => r.object_key));
      return {
        missing: rows.filter((r) => !keys.has(r.object_key)).map((r) => r.id),
        orphans: [...[...keys].filter((k) => !named.has(k)), ...incomplete.map((k) => `unfinished ${k}`)],
      };
    }
    async function untilClean(ms: number): Promise<{ missing: string[]; orphans: string[] }> {
      const deadline = Date.now() + ms;
      for (;;) {
        const state = await halfStored();
        if ((state.missing.length === 0 && state.orphans.length === 0) || Date.now() > deadline) return state;
        await sleep(250);
      }
    }
    async function untilStoredPart(): Promise<void> {
      const deadline = Date.now() + 15_000;
      for (;;) {
        if ((await store.unfinishedUploads()).length > 0) return;
        if (Date.now() > deadline) throw new Error('no part of the upload reached S3');
        await sleep(100);
      }
    }
    const failed = (err: unknown) => ({ status: 0, body: String(err) });
    /** The first upload that is stored again after a fault, and how long it took to get there. */
    async function firstStoredUpload(since: number): Promise<{ status: number; body: any; seconds: number }> {
      for (;;) {
        const r = await slowUpload(filesUrl, wsKey, randomBytes(64 * 1024), { pieces: 1, delayMs: 0 }).catch(
          failed,
        );
        if (r.status === 201 || Date.now() > since + 90_000)
          return { ...r, seconds: (Date.now() - since) / 1000 };
        await sleep(250);
      }
    }

    it('S3 down 30 s during an upload: it fails cleanly, nothing half-stored, uploads work again', async () => {
      let downAt = 0;
      // 12 MiB in 48 pieces, 100 ms apart: S3 goes down once the first 5 MiB part is stored.
      const during = await slowUpload(filesUrl, wsKey, randomBytes(12 * MIB), {
        pieces: 48,
        delayMs: 100,
        onSent: async (i) => {
          if (i !== 28) return;
          await untilStoredPart();
          await s3.kill();
          downAt = Date.now();
        },
      }).catch(failed);
      // An upload started while S3 is down is refused cleanly too.
      const refused = await slowUpload(filesUrl, wsKey, randomBytes(1024), { pieces: 1, delayMs: 0 }).catch(
        failed,
      );
      await sleep(Math.max(0, downAt + 30_000 - Date.now()));
      await s3.start();
      const upAt = Date.now();
      const after = await firstStoredUpload(upAt);
      const state = await untilClean(30_000);
      rows.push({
        fault: 'S3 down 30 s during an upload',
        lost: state.missing.length,
        duplicated: state.orphans.length,
        toolsRunTwice: 0,
        recoverySeconds: after.seconds,
        note: `files: lost = File rows without their object, duplicated = objects no File names after the sweep; the upload in flight answered ${during.status}, one during the outage ${refused.status}`,
      });
      process.stdout.write(
        `[faults] S3 down: in flight ${during.status} ${JSON.stringify(during.body).slice(0, 300)}; during ${refused.status} ${JSON.stringify(refused.body).slice(0, 300)}\n`,
      );

      // The upload in flight either was stored whole or failed with the error envelope; so did the next.
      for (const r of [during, refused])
        if (r.status !== 201) {
          expect(r.status).toBeGreaterThanOrEqual(500);
          expect(r.body).toMatchObject({ type: 'error', error: { type: expect.any(String) } });
        }
      expect(refused.status).not.toBe(201);
      expect(after.status).toBe(201);
      expect(state).toEqual({ missing: [], orphans: [] });
      if (during.status === 201)
        expect(await api.sql('SELECT 1 FROM files WHERE id = $1', [during.body.id])).toHaveLength(1);
      expect(after.seconds).toBeLessThanOrEqual(TTL_SECONDS + 10);
    }, 240_000);

    it('kill -9 apps/files during an upload: no File without its object, the partial object is swept', async () => {
      let killedAt = 0;
      const during = await slowUpload(filesUrl, wsKey, randomBytes(12 * MIB), {
        pieces: 48,
        delayMs: 100,
        onSent: async (i) => {
          if (i !== 28) return;
          await untilStoredPart();
          deadLogs.push(files.logs());
          await files.stop('SIGKILL');
          killedAt = Date.now();
        },
      }).catch(failed);
      files = await startFilesProcess();
      const after = await firstStoredUpload(killedAt);
      const state = await untilClean(30_000);
      rows.push({
        fault: 'kill -9 apps/files during an upload',
        lost: state.missing.length,
        duplicated: state.orphans.length,
        toolsRunTwice: 0,
        recoverySeconds: after.seconds,
        note: "restarted at once; its sweeper removes the killed upload's parts when their lease runs out",
      });
      // The connection died with the process: no answer, and no File row for it.
      expect(during.status).toBe(0);
      expect(after.status).toBe(201);
      expect(state).toEqual({ missing: [], orphans: [] });
      expect(after.seconds).toBeLessThanOrEqual(TTL_SECONDS + 10);
    }, 240_000);

    /**
     * A Memory row: a Session with a Memory Store attached read_write, whose one Memory holds the old
     * version; its turn's tool writes the new version to /mnt/memory and the runner's sync after the call
     * pushes it through the ingress, where `fault` lands on that write (the write is held until it has).
     * Then the same Session assertions as every row, plus: every time the Memory is read it is the old or
     * the new version whole, it is the new one once the fault is over (the runner's next sync), and once
     * the sweeper has run no object is orphaned and none is missing.
     */
    async function memoryRow(
      name: string,
      note: string,
      fault: { atWrite: () => Promise<void>; end: () => Promise<void> },
    ): Promise<void> {
      const tag = `m${rows.length}`;
      const http = httpClient(ingress.url, wsKey);
      const memStore = (await http.post('/v1/memory_stores', { name: `notes-${tag}` })).body;
      const seeded = await http.post(`/v1/memory_stores/${memStore.id}/memories`, {
        path: '/state.md',
        content: memoryVersion('old', tag),
      });
      expect(seeded.status).toBe(201);
      const memoryId = seeded.body.id as string;
      const read = async () =>
        (await http.get(`/v1/memory_stores/${memStore.id}/memories/${memoryId}`).catch(() => undefined))?.body
          ?.content as string | undefined;
      const seen = new Set<string>();
      const versions = new Set([memoryVersion('old', tag), memoryVersion('new', tag)]);
      let reading = true;
      const reader = (async () => {
        while (reading) {
          const c = await read();
          if (typeof c === 'string') seen.add(c);
          await sleep(500);
        }
      })();
      let landed: () => void = () => undefined;
      const faultLanded = new Promise<void>((r) => (landed = r));
      let injectedAt = 0;
      holdRequest = (method, url) => {
        if (injectedAt || method !== 'POST' || !url.startsWith(`/v1/memory_stores/${memStore.id}/memories/`))
          return;
        injectedAt = Date.now();
        return fault.atWrite().finally(landed);
      };
      await restartSupervisor({ MANGO_BASE_URL: ingress.url });
      try {
        const s = (
          await ws.post('/v1/sessions', {
            agent: agentId,
            environment_id: envId,
            resources: [{ type: 'memory_store', memory_store_id: memStore.id, access: 'read_write' }],
            initial_events: [{ type: 'user.message', content: [{ type: 'text', text: `memo ${tag}` }] }],
          })
        ).body.id as string;
        const client = new ResumingClient(() => api.url, `/v1/sessions/${s}/events/stream`, wsKey).start();
        clients.push(client);
        const toolUsed = await until(s, (l) => l.some((e) => e.type === 'agent.tool_use'), 180_000);
        expect(toolUsed.some((e) => e.type === 'agent.tool_use')).toBe(true);
        const deadline = Date.now() + 120_000;
        while (!injectedAt && Date.now() < deadline) await sleep(100);
        expect(injectedAt).toBeGreaterThan(0);
        await faultLanded;
        await fault.end();
        const endedAt = Date.now();
        const done = await until(s, (l) => l.some((e) => e.type === 'session.status_idle'), 240_000);
        const idleAt = Date.now();
        // The new version once the fault is over: the runner's next sync (every 15 s) pushes it again.
        let current = await read();
        while (current !== memoryVersion('new', tag) && Date.now() < endedAt + 120_000) {
          await sleep(500);
          current = await read();
        }
        const recoveredAt = Date.now();
        reading = false;
        await reader;
        const state = await untilClean(30_000);
        const uses = done.filter((e) => e.type === 'agent.tool_use');
        const results = done.filter((e) => e.type === 'user.tool_result');
        const tally = await sseTally(s, client);
        const log = await logOf(s);
        const extraIdles = log.filter((e) => e.type === 'session.status_idle').length - 1;
        const halfWritten = [...seen].filter((c) => !versions.has(c)).length;
        rows.push({
          fault: name,
          lost: tally.lost + state.missing.length,
          duplicated:
            tally.duplicated +
            state.orphans.length +
            Math.max(0, extraIdles) +
            Math.max(0, results.length - uses.length),
          toolsRunTwice: 0,
          recoverySeconds: (recoveredAt - endedAt) / 1000,
          note: `${note}; Memory read ${seen.size === 2 ? 'old then new' : [...seen].map((c) => c.split(' ')[0]).join(', ')}, ${halfWritten} half-written; turn idle ${((idleAt - endedAt) / 1000).toFixed(1)} s after`,
        });
        process.stdout.write(`[faults] ${name}: ${tally.detail}; Memory state ${JSON.stringify(state)}\n`);
        expect(done.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
        expect(uses).toHaveLength(1);
        expect(results.map((r) => r.tool_use_id)).toEqual(uses.map((u) => u.id));
        expect({ lost: tally.lost, duplicated: tally.duplicated, extraIdles }).toEqual({
          lost: 0,
          duplicated: 0,
          extraIdles: 0,
        });
        expect(halfWritten).toBe(0);
        expect(current).toBe(memoryVersion('new', tag));
        expect(state).toEqual({ missing: [], orphans: [] });
        expect(idleAt).toBeLessThanOrEqual(endedAt + (TTL_SECONDS + 10) * 1000);
        expect(recoveredAt).toBeLessThanOrEqual(endedAt + (TTL_SECONDS + 10) * 1000);
      } finally {
        reading = false;
        holdRequest = undefined;
        await restartSupervisor({});
      }
    }

    it('S3 down 30 s during a Memory sync: the Memory is old or new, never half-written, nothing orphaned', async () => {
      let downAt = 0;
      await memoryRow(
        'S3 down 30 s during a Memory sync',
        "versitygw killed as the runner's sync write reaches the ingress, started 30 s later",
        {
          atWrite: async () => {
            await s3.kill();
            downAt = Date.now();
          },
          end: async () => {
            await sleep(Math.max(0, downAt + 30_000 - Date.now()));
            await s3.start();
          },
        },
      );
    }, 420_000);

    it('kill -9 apps/files during a Memory sync: the Memory is old or new, never half-written, nothing orphaned', async () => {
      await memoryRow(
        'kill -9 apps/files during a Memory sync',
        "apps/files killed 30 ms after the runner's sync write was forwarded to it, restarted at once",
        {
          // The write is forwarded at once; the kill lands while apps/files handles it.
          atWrite: async () => {
            setTimeout(() => {
              deadLogs.push(files.logs());
              void files.stop('SIGKILL');
            }, 30);
          },
          end: async () => {
            await sleep(500);
            while (files.child.exitCode === null && files.child.signalCode === null) await sleep(100);
            files = await startFilesProcess();
          },
        },
      );
    }, 420_000);

    it('S3 down 30 s during a Skill staging: the next activation stages it, the tool runs once', async () => {
      const tag = `k${rows.length}`;
      const form = new FormData();
      const skillMd = `---\nname: faultnotes-${tag}\ndescription: Notes for the fault matrix.\n---\n# Notes\nstaged skill ${tag}\n`;
      form.append('files[]', new Blob([skillMd]), `faultnotes-${tag}/SKILL.md`);
      const skill = await fetch(`${ingress.url}/v1/skills`, {
        method: 'POST',
        headers: { authorization: `Bearer ${wsKey}` },
        body: form,
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id: string } }));
      expect(skill.status).toBe(201);
      const skilled = (
        await ws.post('/v1/agents', {
          name: `skilled-${tag}`,
          model: 'm',
          tools: [{ type: 'agent_toolset_20260401' }],
          skills: [{ type: 'custom', skill_id: skill.body.id }],
        })
      ).body.id as string;
      // The first request for the Skill's content the runner makes kills S3 before it is forwarded.
      let downAt = 0;
      holdRequest = async (method, url) => {
        if (downAt || method !== 'GET' || !url.startsWith(`/v1/skills/${skill.body.id}/versions/`)) return;
        downAt = Date.now();
        await s3.kill();
      };
      await restartSupervisor({ MANGO_BASE_URL: ingress.url });
      try {
        const s = (
          await ws.post('/v1/sessions', {
            agent: skilled,
            environment_id: envId,
            initial_events: [{ type: 'user.message', content: [{ type: 'text', text: `skill ${tag}` }] }],
          })
        ).body.id as string;
        const client = new ResumingClient(() => api.url, `/v1/sessions/${s}/events/stream`, wsKey).start();
        clients.push(client);
        const deadline = Date.now() + 120_000;
        while (!downAt && Date.now() < deadline) await sleep(100);
        expect(downAt).toBeGreaterThan(0);
        await sleep(Math.max(0, downAt + 30_000 - Date.now()));
        await s3.start();
        const upAt = Date.now();
        const done = await until(s, (l) => l.some((e) => e.type === 'session.status_idle'), 240_000);
        const idleAt = Date.now();
        const uses = done.filter((e) => e.type === 'agent.tool_use');
        const results = done.filter((e) => e.type === 'user.tool_result');
        const tally = await sseTally(s, client);
        const log = await logOf(s);
        const extraIdles = log.filter((e) => e.type === 'session.status_idle').length - 1;
        const [claims] = await api.sql<{ items: number; claims: number }>(
          'SELECT count(*)::int AS items, coalesce(sum(claim_count), 0)::int AS claims FROM work_items WHERE session_id = $1',
          [s],
        );
        rows.push({
          fault: 'S3 down 30 s during a Skill staging',
          lost: tally.lost,
          duplicated: tally.duplicated + Math.max(0, extraIdles) + Math.max(0, results.length - uses.length),
          toolsRunTwice: 0,
          recoverySeconds: (idleAt - upAt) / 1000,
          note: `versitygw killed as the runner's first Skill request reaches the ingress, started 30 s later; ${claims!.items} Work items claimed ${claims!.claims} times (a failed staging leaves its lease to expire)`,
        });
        process.stdout.write(
          `[faults] S3 down during a Skill staging: ${tally.detail}; ${claims!.items} Work items, ${claims!.claims} claims\n`,
        );
        expect(done.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
        expect(uses).toHaveLength(1);
        expect(results.map((r) => r.tool_use_id)).toEqual(uses.map((u) => u.id));
        // The tool ran on the staged Skill.
        expect(JSON.stringify(results[0]!.content)).toContain(`staged skill ${tag}`);
        expect({ lost: tally.lost, duplicated: tally.duplicated, extraIdles }).toEqual({
          lost: 0,
          duplicated: 0,
          extraIdles: 0,
        });
        expect(idleAt).toBeLessThanOrEqual(upAt + (TTL_SECONDS + 10) * 1000);
      } finally {
        holdRequest = undefined;
        await restartSupervisor({});
      }
    }, 420_000);

    it(
      `soak ${SOAK_SECONDS} s: turns with tool calls, uploads and streams; RSS, PostgreSQL connections and the outbox stay flat`,
      async () => {
        const MIB_ = 1024 * 1024;
        const processes = (): Record<string, AppProcess> => ({
          api: apiProc,
          orchestrator,
          supervisor,
          files,
        });
        const rssOf = (p: AppProcess) =>
          Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p.child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
        type Sample = {
          rss: Record<string, number>;
          connections: number;
          outbox: number;
          /** apps/api's own figures (prom-client's default metrics): what of its RSS is V8 heap, what native. */
          apiMemory: Record<string, number>;
        };
        const API_MEMORY = {
          heapUsed: 'mango_nodejs_heap_size_used_bytes',
          heapTotal: 'mango_nodejs_heap_size_total_bytes',
          external: 'mango_nodejs_external_memory_bytes',
        };
        const apiMemory = async (): Promise<Record<string, number>> => {
          const text = await fetch(`http://127.0.0.1:${apiMetricsPort}/metrics`)
            .then((r) => r.text())
            .catch(() => '');
          return Object.fromEntries(
            Object.entries(API_MEMORY).map(([k, name]) => [
              k,
              Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN),
            ]),
          );
        };
        const samples: Sample[] = [];
        const sample = async () => {
          await collectGarbage(apiProc.logs());
          const rss = Object.fromEntries(Object.entries(processes()).map(([k, p]) => [k, rssOf(p)]));
          const [{ n: connections }] = await api.sql<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()',
          );
          const [{ n: outbox }] = await api.sql<{ n: number }>(
            'SELECT count(*)::int AS n FROM outbox WHERE dispatched_at IS NULL',
          );
          samples.push({ rss, connections: connections!, outbox: outbox!, apiMemory: await apiMemory() });
        };
        const until = Date.now() + SOAK_SECONDS * 1000;
        let stopSampling = false;
        const sampler = (async () => {
          while (!stopSampling) {
            await sample();
            await sleep(5000);
          }
        })();
        // Three Sessions, each streamed, each running turns that call a (quick) bash tool, back to back.
        const turnsOf = async (i: number) => {
          const id = (await ws.post('/v1/sessions', { agent: agentId, environment_id: envId })).body
            .id as string;
          const stream = new ResumingClient(() => api.url, `/v1/sessions/${id}/events/stream`, wsKey).start();
          clients.push(stream);
          let turns = 0;
          while (Date.now() < until) {
            const sent = await ws.post(`/v1/sessions/${id}/events`, {
              events: [{ type: 'user.message', content: [{ type: 'text', text: `quick s${i}t${turns}` }] }],
            });
            expect(sent.status).toBe(200);
            turns++;
            await untilIdle(id, turns);
          }
          return { id, stream, turns };
        };
        // Uploads to apps/files, back to back (256 KiB each), every one stored.
        const uploads = async () => {
          let n = 0;
          while (Date.now() < until) {
            const r = await slowUpload(filesUrl, wsKey, randomBytes(256 * 1024), { pieces: 1, delayMs: 0 });
            // A refusal says why: its envelope, and what apps/files logged about it.
            if (r.status !== 201)
              throw new Error(
                `upload ${n + 1} answered ${r.status} ${JSON.stringify(r.body)}; apps/files said:\n${files
                  .logs()
                  .split('\n')
                  .filter((l) => /"level":"(warn|error)"|"level":(40|50)/.test(l))
                  .slice(-20)
                  .join('\n')}`,
              );
            n++;
          }
          return n;
        };
        const [sessions, uploaded] = await Promise.all([Promise.all([0, 1, 2].map(turnsOf)), uploads()]);
        stopSampling = true;
        await sampler;
        await sample();

        let lost = 0;
        let duplicated = 0;
        for (const s of sessions) {
          const tally = await sseTally(s.id, s.stream);
          lost += tally.lost;
          duplicated += tally.duplicated;
          const log = await logOf(s.id);
          expect({
            uses: log.filter((e) => e.type === 'agent.tool_use').length,
            results: log.filter((e) => e.type === 'user.tool_result').length,
            idles: log.filter((e) => e.type === 'session.status_idle').length,
          }).toEqual({ uses: s.turns, results: s.turns, idles: s.turns });
        }
        // Flat: the last third of the run against the first third (after the first sample's warm-up).
        const third = Math.max(1, Math.floor(samples.length / 3));
        const early = samples.slice(1, 1 + third);
        const late = samples.slice(-third);
        const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
        const growth = Object.keys(processes()).map((name) => {
          const before = median(early.map((x) => x.rss[name]!));
          const after = median(late.map((x) => x.rss[name]!));
          return { name, before: Math.round(before / MIB_), after: Math.round(after / MIB_) };
        });
        const connections = {
          before: Math.max(...early.map((x) => x.connections)),
          after: Math.max(...late.map((x) => x.connections)),
        };
        const outboxMax = Math.max(...samples.map((x) => x.outbox));
        const apiFigures = Object.keys(API_MEMORY).map((k) => {
          const mib = (xs: Sample[]) => Math.round(median(xs.map((x) => x.apiMemory[k]!)) / MIB_);
          return `${k} ${mib(early)}→${mib(late)}`;
        });
        const turns = sessions.reduce((n, s) => n + s.turns, 0);
        process.stdout.write(
          `[faults] soak ${SOAK_SECONDS} s: ${turns} turns with a tool call, ${uploaded} uploads, ${samples.length} samples; RSS MiB ${growth.map((g) => `${g.name} ${g.before}→${g.after}`).join(', ')} (api MiB ${apiFigures.join(', ')}); PostgreSQL connections ${connections.before}→${connections.after}; outbox undispatched max ${outboxMax}; lost ${lost}, duplicated ${duplicated}\n`,
        );
        expect({ lost, duplicated }).toEqual({ lost: 0, duplicated: 0 });
        expect(turns).toBeGreaterThan(10);
        expect(uploaded).toBeGreaterThan(10);
        // A leak of well under 1 MiB a turn would show over a few hundred turns; warm-up is excluded above.
        expect(growth.filter((g) => g.after > g.before * 1.25 + 48)).toEqual([]);
        expect(connections.after).toBeLessThanOrEqual(connections.before + 3);
        expect(outboxMax).toBeLessThanOrEqual(20);
      },
      (SOAK_SECONDS + 240) * 1000,
    );
  });

  describe('the Docker daemon restarts (after the files block)', () => {
    it.each(DOCKERD_FAULTS.map((f) => [f.name, f] as const))(ROW_TITLE, runFault, 420_000);
  });

  // Its own block, so it runs after the files block too (jest runs a block's tests before its child blocks).
  describe('after every fault', () => {
    it('secret canary: no credential the run created is in any process log, Temporal history or event', async () => {
      // Credentials of the other kinds, created through the API like a user would.
      const vault = (await ws.post('/v1/vaults', { display_name: 'canary' })).body.id;
      const token = `canary-bearer-${randomBytes(12).toString('hex')}`;
      const cred = await ws.post(`/v1/vaults/${vault}/credentials`, {
        display_name: 'canary',
        auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token },
      });
      expect(cred.status).toBe(201);
      secrets.set('vault secret', token);
      const hook = await ws.post('/v1/webhooks', {
        url: 'https://hooks.example.com/mango',
        event_types: ['session.created'],
      });
      expect(hook.status).toBe(201);
      expect(typeof hook.body.secret).toBe('string');
      secrets.set('webhook secret', hook.body.secret);
      // A Work token: the supervisor's are never shown; one issued to us for a Session of another Environment.
      const other = (await ws.post('/v1/environments', { name: 'canary-pool' })).body.id;
      const otherKey = (await api.issueKey('wrkspc_default', other)).api_key;
      secrets.set('environment key (2)', otherKey);
      const poller = httpClient(api.url, otherKey);
      await ws.post('/v1/sessions', {
        agent: chatAgentId,
        environment_id: other,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'canary' }] }],
      });
      const polled = await poller.get(`/v1/environments/${other}/work/poll?block_ms=20000`);
      expect(polled.status).toBe(200);
      secrets.set('work secret', polled.body.secret);
      secrets.set('work Session token', decodeWorkSecret(polled.body.secret).sessions_token);
      await sleep(3000);

      const haystacks: Array<[string, string]> = [
        ['logs of replaced processes (api, orchestrator, supervisor, files, S3)', deadLogs.join('\n')],
        ['api logs', apiProc.logs()],
        ['orchestrator logs', orchestrator.logs()],
        ['supervisor logs', supervisor.logs()],
        ['temporal logs', temporal.output],
      ];
      const events = await api.sql<{ body: string }>('SELECT body::text AS body FROM session_events');
      haystacks.push(['session events', events.map((e) => e.body).join('\n')]);
      const hooks = await api.sql<{ t: string }>('SELECT row_to_json(w)::text AS t FROM webhook_events w');
      haystacks.push(['webhook events', hooks.map((r) => r.t).join('\n')]);
      const c = await Connection.connect({ address: temporal.address });
      try {
        const client = new Client({ connection: c });
        let histories = '';
        let n = 0;
        for await (const wf of client.workflow.list()) {
          histories += JSON.stringify(
            await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory(),
          );
          n++;
        }
        expect(n).toBeGreaterThan(0);
        haystacks.push(['Temporal histories', histories]);
      } finally {
        await c.close();
      }
      const found: string[] = [];
      for (const [what, secret] of secrets)
        for (const [where, text] of haystacks) if (text.includes(secret)) found.push(`${what} in ${where}`);
      process.stdout.write(
        `\nSecret canary: ${secrets.size} credentials searched in ${haystacks.map((h) => h[0]).join(', ')}: ${found.length ? found.join('; ') : 'none found'}\n`,
      );
      expect(found).toEqual([]);
    }, 180_000);
  });
});
