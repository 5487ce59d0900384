// `mango-worker item`: the process inside each Work container. It becomes non-dumpable before it reads
// the Work secret from its one-shot stdin, then serves exactly one acknowledged item.
import { makeNonDumpable, handleItem, parseCustomTools, runHealthcheckProbe } from '@mango/worker-runtime';
import { loadConfig } from '@mango/platform-config';
import { createLogger } from '@mango/platform-logging';
import { Agent, setGlobalDispatcher } from 'undici';
import { ItemEnv } from './item.env';

const MAX_SECRET_BYTES = 64 * 1024;

async function readSecret(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > MAX_SECRET_BYTES) throw new Error('the Work secret on stdin is too large');
    chunks.push(chunk as Buffer);
  }
  const secret = Buffer.concat(chunks).toString('utf8').trim();
  if (!secret) throw new Error('no Work secret on stdin');
  return secret;
}

async function main(): Promise<number> {
  makeNonDumpable();
  // The supervisor's graceful shutdown: finish the call in flight and deliver its result, then Stop.
  const drain = new AbortController();
  process.on('SIGTERM', () => drain.abort());
  const env = loadConfig(ItemEnv);
  // Every request of the runner (Work, Session events and stream, Skills, Memory) goes over the socket.
  if (env.MANGO_API_SOCKET) setGlobalDispatcher(new Agent({ connect: { socketPath: env.MANGO_API_SOCKET } }));
  const log = createLogger({ service: 'item', level: 'info' });
  const customTools = env.MANGO_CUSTOM_TOOLS
    ? parseCustomTools(env.MANGO_CUSTOM_TOOLS, 'MANGO_CUSTOM_TOOLS')
    : undefined;
  const secret = await readSecret();
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
    drain: drain.signal,
    leaseTtlSeconds: env.MANGO_WORK_TTL_SECONDS,
    customTools,
    shellEnv: { PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: env.HOME ?? '/tmp' },
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
