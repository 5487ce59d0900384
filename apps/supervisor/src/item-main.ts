// `mango-worker item`: the process inside each Work container. It becomes non-dumpable before it reads
// the Work secret from its one-shot stdin, then serves exactly one acknowledged item. A pooled container
// (MANGO_ITEM_ASSIGNMENT=stdin: docs/operator-guide.md "Warm pool") starts with no Work at all, loaded and
// waiting: its Work identity arrives with the secret, as one assignment line on stdin after the Ack.
import {
  egressShellEnv,
  handleItem,
  makeNonDumpable,
  runHealthcheckProbe,
  startEgressForwarder,
} from '@mango/worker-runtime/item';
import { parseItemAssignment, POOLED_RUNNER_READY } from '@mango/domain-work-lease';
import { loadConfig } from '@mango/platform-config';
import { createLogger } from '@mango/platform-logging';
import { Agent, setGlobalDispatcher } from 'undici';
import { ItemEnv, ItemModeEnv, ItemSandboxEnv } from './item.env';

const MAX_SECRET_BYTES = 64 * 1024;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > MAX_SECRET_BYTES) throw new Error('the Work secret on stdin is too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) throw new Error('no Work secret on stdin');
  return text;
}

/** Every request of the runner (Work, Session events and stream, Skills, Memory) goes over the socket. */
function useSocket(env: ItemSandboxEnv): void {
  if (env.MANGO_API_SOCKET) setGlobalDispatcher(new Agent({ connect: { socketPath: env.MANGO_API_SOCKET } }));
}

/** The item's identity (env) and secret (stdin); a pooled runner gets both from its assignment line. */
async function identityAndSecret(log: ReturnType<typeof createLogger>): Promise<[ItemEnv, string]> {
  if (loadConfig(ItemModeEnv).MANGO_ITEM_ASSIGNMENT !== 'stdin') {
    const env = loadConfig(ItemEnv); // every bad variable named at once
    useSocket(env);
    return [env, await readStdin()];
  }
  const sandbox = loadConfig(ItemSandboxEnv);
  useSocket(sandbox);
  // Pooled: the first request's one-time costs (Node's fetch loads on first use) are paid while waiting.
  // The socket directory is still empty, so this request reaches nothing and fails at once.
  await fetch(`${sandbox.MANGO_BASE_URL}/v1/pooled-warm-up`, {
    signal: AbortSignal.timeout(2000),
  }).catch(() => undefined);
  log.info({}, POOLED_RUNNER_READY);
  const a = parseItemAssignment(await readStdin());
  const env = loadConfig(ItemEnv, undefined, {
    MANGO_WORK_ID: a.work_id,
    MANGO_ENVIRONMENT_ID: a.environment_id,
    MANGO_WORK_TYPE: a.work_type,
  });
  return [env, a.secret];
}

async function main(): Promise<number> {
  makeNonDumpable();
  // The supervisor's graceful shutdown: finish the call in flight and deliver its result, then Stop.
  const drain = new AbortController();
  process.on('SIGTERM', () => drain.abort());
  const log = createLogger({ service: 'item', level: 'info' });
  const [env, secret] = await identityAndSecret(log);
  // Session Work only (the supervisor passes custom tools to Session items): loaded only then.
  const customTools = env.MANGO_CUSTOM_TOOLS
    ? (await import('@mango/worker-runtime')).parseCustomTools(env.MANGO_CUSTOM_TOOLS, 'MANGO_CUSTOM_TOOLS')
    : undefined;
  // Egress (ADR 0021): only when the supervisor mounted its proxy's socket.
  const egress = env.MANGO_EGRESS_SOCKET
    ? await startEgressForwarder({ socketPath: env.MANGO_EGRESS_SOCKET, port: env.MANGO_EGRESS_PROXY_PORT })
    : undefined;
  return handleItem({
    identity: {
      workId: env.MANGO_WORK_ID,
      environmentId: env.MANGO_ENVIRONMENT_ID,
      workType: env.MANGO_WORK_TYPE,
      sessionId: env.MANGO_SESSION_ID,
    },
    secret,
    baseUrl: env.MANGO_BASE_URL,
    workdir: '/workspace',
    log,
    maxIdleMs: env.MANGO_SESSION_IDLE_MS,
    maxConcurrentCalls: env.MANGO_MAX_CONCURRENT_CALLS,
    drain: drain.signal,
    leaseTtlSeconds: env.MANGO_WORK_TTL_SECONDS,
    customTools,
    shellEnv: {
      PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: env.HOME ?? '/tmp',
      ...egressShellEnv(egress?.port),
    },
    healthcheck: ({ workdir }) => runHealthcheckProbe({ workdir, sandboxMarker: env.MANGO_SANDBOX }),
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `${JSON.stringify({ level: 'fatal', service: 'item', msg: String((err as Error)?.message ?? err) })}\n`,
    );
    process.exit(2);
  },
);
