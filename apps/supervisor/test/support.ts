import { join } from 'node:path';
import Docker from 'dockerode';
import {
  ApiUnderTest,
  AppProcess,
  httpClient,
  HttpClient,
  logged,
  ScriptedModelServer,
  startApi,
  startApp,
  startOrchestrator,
  startScriptedModel,
} from '@mango/testing';

export const ROOT = join(__dirname, '../../..');
export const WORK_LABEL = 'dev.mango.work_id';
export type Ev = { id: string; type: string; [k: string]: any };

/**
 * The whole self-hosted path as real processes: apps/api, apps/orchestrator (Temporal, the scripted model
 * as the only double), and `mango-worker docker` on the real dockerd running items from this checkout.
 */
export interface Stack {
  api: ApiUnderTest;
  model: ScriptedModelServer;
  orchestrator: AppProcess;
  ws: HttpClient;
  envId: string;
  envKey: string;
  docker: Docker;
  startSupervisor(extra?: Record<string, string>): Promise<AppProcess>;
  events(sessionId: string): Promise<Ev[]>;
  until(sessionId: string, predicate: (e: Ev[]) => boolean, ms?: number): Promise<Ev[]>;
  workOf(sessionId: string): Promise<Array<{ id: string; state: string; [k: string]: any }>>;
  untilWork(sessionId: string, predicate: (w: any[]) => boolean, ms?: number): Promise<any[]>;
  agent(name: string, configs?: unknown[]): Promise<string>;
  close(): Promise<void>;
}

export async function startStack(
  label: string,
  options: { apiEnv?: Record<string, string>; orchestratorEnv?: Record<string, string> } = {},
): Promise<Stack> {
  const api = await startApi(label, options.apiEnv);
  const model = await startScriptedModel();
  const orchestrator = await startOrchestrator(api.db.url, {
    taskQueue: `${label}-${Date.now()}`,
    modelUrl: model.url,
    modelKey: 'sk-scripted-model-key-must-not-leak',
    env: options.orchestratorEnv,
  });
  const ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
  const envId = (await ws.post('/v1/environments', { name: `${label}-pool` })).body.id as string;
  const envKey = (await api.issueKey('wrkspc_default', envId)).api_key;
  const docker = new Docker({ socketPath: new URL(process.env.DOCKER_HOST!).pathname });
  const supervisors: AppProcess[] = [];
  const usedIds = new Set<string>();
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const events = async (sessionId: string) =>
    (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data as Ev[];
  const workOf = async (sessionId: string) =>
    ((await ws.get(`/v1/environments/${envId}/work?limit=100`)).body.data as any[])
      .filter((w) => w.data.type === 'session' && w.data.id === sessionId)
      .reverse();
  return {
    api,
    model,
    orchestrator,
    ws,
    envId,
    envKey,
    docker,
    async startSupervisor(extra = {}) {
      usedIds.add(extra.MANGO_SUPERVISOR_ID ?? `test-${envId.toLowerCase()}`);
      const s = await startApp(
        'apps/supervisor/src/main.ts',
        {
          MANGO_ENVIRONMENT_KEY: envKey,
          MANGO_ENVIRONMENT_ID: envId,
          MANGO_BASE_URL: api.url,
          DOCKER_HOST: process.env.DOCKER_HOST!,
          MANGO_WORKER_IMAGE: process.env.MANGO_BASE_IMAGE!,
          MANGO_WORKER_SOURCE_DIR: ROOT,
          MANGO_SUPERVISOR_ID: `test-${envId.toLowerCase()}`,
          MANGO_SESSION_IDLE_MS: '1000',
          MANGO_MODEL_API_KEY: 'sk-model-secret-must-not-leak',
          MANGO_API_KEY: 'mango_ak_must_not_leak',
          ...extra,
        },
        logged('docker engine connected'),
        60_000,
      );
      supervisors.push(s);
      return s;
    },
    events,
    async until(sessionId, predicate, ms = 90_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const list = await events(sessionId);
        if (predicate(list) || Date.now() > deadline) return list;
        await sleep(150);
      }
    },
    workOf,
    async untilWork(sessionId, predicate, ms = 60_000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const list = await workOf(sessionId);
        if (predicate(list) || Date.now() > deadline) return list;
        await sleep(150);
      }
    },
    async agent(name, configs) {
      return (
        await ws.post('/v1/agents', {
          name: `${name}-${Date.now()}`,
          model: 'm',
          tools: [{ type: 'agent_toolset_20260401', ...(configs ? { configs } : {}) }],
        })
      ).body.id as string;
    },
    async close() {
      for (const s of supervisors) await s.stop().catch(() => undefined);
      // Session workspace volumes outlive activations by design; tests remove the ones they made.
      const { Volumes } = await docker.listVolumes({ filters: { label: ['dev.mango.supervisor'] } });
      const ours = (Volumes ?? []).filter((v) => usedIds.has(v.Labels?.['dev.mango.supervisor'] ?? ''));
      for (const v of ours)
        await docker
          .getVolume(v.Name)
          .remove({ force: true })
          .catch(() => undefined);
      await orchestrator.stop();
      await model.close();
      await api.close();
    },
  };
}

/** A model reply that calls one tool. */
export const toolCall = (id: string, name: string, input: Record<string, unknown>) => ({
  content: [{ type: 'tool_use', id, name, input }],
  stop_reason: 'tool_use',
});

/** The text of the tool_result the model received last (and whether it was an error). */
export const lastResult = (body: any): { text: string; is_error: boolean } => {
  const block = body.messages.at(-1).content[0];
  // An error the server made up (denied, interrupted) is a plain string.
  return {
    text: typeof block.content === 'string' ? block.content : block.content[0].text,
    is_error: block.is_error,
  };
};

/** Records container lifecycle events (create/start/die/destroy) for Mango Work containers. */
export async function watchContainers(docker: Docker) {
  const seen: Array<{ action: string; work: string; id: string; time: number }> = [];
  /** Each Work container as inspected the moment it started (it is removed after its activation). */
  const inspected = new Map<string, Docker.ContainerInspectInfo>();
  const stream = (await docker.getEvents({
    filters: { type: ['container'], label: [WORK_LABEL] },
  })) as NodeJS.ReadableStream & { destroy?: () => void };
  stream.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      const e = JSON.parse(line);
      seen.push({ action: e.Action, work: e.Actor.Attributes[WORK_LABEL], id: e.id, time: e.timeNano });
      if (e.Action === 'start')
        docker
          .getContainer(e.id)
          .inspect()
          .then((info) => inspected.set(e.Actor.Attributes[WORK_LABEL], info))
          .catch(() => undefined);
    }
  });
  return { seen, inspected, close: () => stream.destroy?.() };
}

/** Runs `cmd` in a running Work container as the sandbox user (docker exec); resolves to its exit code. */
async function execIn(container: Docker.Container, cmd: string[]): Promise<number | null> {
  const exec = await container.exec({ Cmd: cmd, User: '1000:1000', AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({});
  await new Promise((r) => stream.on('end', r).resume());
  return (await exec.inspect()).ExitCode;
}

/** Creates an empty file in a running Work container: the tests' gate for a tool that waits on it. */
export async function touchIn(container: Docker.Container, path: string): Promise<void> {
  const code = await execIn(container, ['touch', path]);
  if (code !== 0) throw new Error(`touch ${path} exited ${code}`);
}

/** Waits until `path` exists in a running Work container. */
export async function untilFileIn(container: Docker.Container, path: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if ((await execIn(container, ['ls', path])) === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${path} never appeared`);
}

/** Waits until a process's output contains `text` (up to `ms`), then asserts that it does. */
export async function untilLogged(proc: { logs(): string }, text: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!proc.logs().includes(text) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(proc.logs()).toContain(text);
}

/**
 * The sealing probe (docs/operator-guide.md "Sandbox network"), run as the agent's bash in a Session
 * container: no host port of the stack is reachable, the only interface is loopback with no route, the
 * Work API socket answers only the Work token's routes (403 locally for anything else, 401 without the
 * token), and a request smuggled in a chunked body gets one local 400. `$SESSION` must hold the Session's
 * id. The interfaces come from /proc/net/dev, which runc and gVisor both have (gVisor's sysfs has no
 * /sys/class/net). `expected` is the output of a sealed sandbox.
 */
export function sealingProbe(stack: Stack): { command: string; expected: string[] } {
  const port = (u: string) => new URL(u.includes('://') ? u : `tcp://${u}`).port;
  const targets = {
    postgresql: port(process.env.MANGO_DATABASE_URL!),
    temporal: port(process.env.MANGO_TEMPORAL_ADDRESS!),
    s3: port(process.env.MANGO_S3_ENDPOINT!),
    api: port(stack.api.url),
  };
  const command = [
    ...Object.entries(targets).map(
      ([name, p]) =>
        `if timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/${p}' 2>/dev/null; then echo "${name}:open"; else echo "${name}:closed"; fi`,
    ),
    `echo "interfaces:$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' ')"`,
    'echo "routes:$(tail -n +2 /proc/net/route | wc -l)"',
    `echo "agents:$(curl -s --unix-socket /run/mango/api.sock http://mango/v1/agents | jq -r .error.type)"`,
    `echo "poll:$(curl -s -o /dev/null -w '%{http_code}' --unix-socket /run/mango/api.sock 'http://mango/v1/environments/${stack.envId}/work/poll')"`,
    `echo "session-without-token:$(curl -s -o /dev/null -w '%{http_code}' --unix-socket /run/mango/api.sock http://mango/v1/sessions/$SESSION)"`,
    // Request smuggling (issue #34): a GET of the Session's events whose chunked body is a whole second
    // request. Every status line the socket answers is printed: one local 400, nothing from Mango.
    `SESSION=$SESSION python3 - <<'PY'`,
    'import os, socket',
    "s = socket.socket(socket.AF_UNIX); s.connect('/run/mango/api.sock')",
    "inner = b'GET /v1/agents?smuggled=e2e HTTP/1.1\\r\\nHost: mango\\r\\n\\r\\n'",
    "head = b'GET /v1/sessions/' + os.environ['SESSION'].encode() + b'/events HTTP/1.1\\r\\nHost: mango\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n'",
    "s.sendall(head + b'%x\\r\\n' % len(inner) + inner + b'\\r\\n0\\r\\n\\r\\n')",
    "data = b''",
    'while True:',
    '    chunk = s.recv(65536)',
    '    if not chunk: break',
    '    data += chunk',
    "print('smuggle:' + ' '.join(l.split()[1].decode() for l in data.split(b'\\r\\n') if l.startswith(b'HTTP/1.1 ')))",
    'PY',
  ].join('\n');
  return {
    command,
    expected: [
      'postgresql:closed',
      'temporal:closed',
      's3:closed',
      'api:closed',
      'interfaces:lo ',
      'routes:0',
      'agents:permission_error',
      'poll:403',
      'session-without-token:401',
      'smuggle:400',
    ],
  };
}

/** The README tour's bash turn: the sandbox image's userland (docs/operator-guide.md "Sandbox image"). */
export const USERLAND_COMMAND =
  'git --version && python3 -V && rg --version | head -1 && echo ok | sed s/ok/fine/';
export const USERLAND_OUTPUT = /^git version 2\.\d+.*\nPython 3\.\d+\.\d+\nripgrep \d+.*\nfine$/s;
