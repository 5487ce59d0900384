import type Docker from 'dockerode';
import { SANDBOX_BASE_URL, SANDBOX_SOCKET_DIR, SANDBOX_SOCKET_PATH } from './work-api-socket';

export const LABEL_WORK = 'dev.mango.work_id';
export const LABEL_ENVIRONMENT = 'dev.mango.environment_id';
export const LABEL_SUPERVISOR = 'dev.mango.supervisor';
/** The Session a Session item's container serves: one activation per Session workspace at a time. */
export const LABEL_SESSION = 'dev.mango.session_id';
/** Marks a pooled container (its value: the pool slot id); it never carries a Work label. */
export const LABEL_POOL = 'dev.mango.pool';

/** What the hardened sandbox container is made from (a subset of LaunchSettings). */
export interface SandboxSettings {
  image: string;
  network: string;
  /** `HostConfig.Runtime` (MANGO_WORKER_RUNTIME, e.g. `runsc`); unset: the daemon's default runtime. */
  runtime?: string;
  sourceDir?: string;
  memoryBytes?: number;
  nanoCpus?: number;
  pidsLimit?: number;
  itemCommand?: string[];
  workTtlSeconds?: number;
  sessionIdleMs?: number;
  /** Passed to Session items: how many calls of different Threads may run at once (docs/worker-contract.md). */
  maxConcurrentCalls?: number;
}

export const ITEM_COMMAND = [
  'node',
  '-r',
  '/opt/mango/tools/runtime/register.js',
  '/opt/mango/apps/supervisor/src/item-main.ts',
];

/** /tmp allows exec: the runtime materializes its native addon there (and tools run scripts anyway). */
export const TMP = 'rw,exec,nosuid,nodev,size=256m,uid=1000,gid=1000';
/** A healthcheck's (and a pooled container's) whole workspace: private, small, gone with the container. */
export const HEALTHCHECK_TMPFS = {
  '/workspace': 'rw,exec,nosuid,nodev,size=16m,uid=1000,gid=1000,mode=0700',
  '/tmp': TMP,
};

/** The non-secret environment every item runner gets, whatever its Work (no Work id, no secret). */
export function sandboxBaseEnv(settings: SandboxSettings): string[] {
  return [
    `MANGO_BASE_URL=${SANDBOX_BASE_URL}`,
    `MANGO_API_SOCKET=${SANDBOX_SOCKET_PATH}`,
    'MANGO_SANDBOX=docker',
    'HOME=/tmp',
    'PATH=/usr/local/bin:/usr/bin:/bin',
    ...(settings.workTtlSeconds !== undefined ? [`MANGO_WORK_TTL_SECONDS=${settings.workTtlSeconds}`] : []),
    ...(settings.sessionIdleMs !== undefined ? [`MANGO_SESSION_IDLE_MS=${settings.sessionIdleMs}`] : []),
    ...(settings.maxConcurrentCalls !== undefined
      ? [`MANGO_MAX_CONCURRENT_CALLS=${settings.maxConcurrentCalls}`]
      : []),
  ];
}

/**
 * The one home of the sandbox hardening (docs/operator-guide.md "The Docker supervisor"), for a cold Work
 * container and a pooled one alike: non-root uid, read-only root, all capabilities dropped,
 * no-new-privileges, pids/memory/CPU limits, the configured network, the Work API socket directory
 * bind-mounted read-only at SANDBOX_SOCKET_DIR, and a one-shot attached stdin (the only way in for a secret).
 */
export function sandboxContainer(
  settings: SandboxSettings,
  o: {
    name: string;
    env: string[];
    labels: Record<string, string>;
    /** The workspace: tmpfs mounts and/or a Session's mount. */
    mounts: Pick<Docker.HostConfig, 'Tmpfs' | 'Mounts'>;
    socketDir: string;
  },
): Docker.ContainerCreateOptions {
  const command = settings.itemCommand ?? ITEM_COMMAND;
  return {
    name: o.name,
    Image: settings.image,
    // Explicit entrypoint: worker images default to the supervisor (`mango-worker docker`).
    Entrypoint: command.slice(0, 1),
    Cmd: command.slice(1),
    Env: o.env,
    User: '1000:1000',
    WorkingDir: '/workspace',
    Labels: o.labels,
    OpenStdin: true,
    StdinOnce: true,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    HostConfig: {
      ...(settings.runtime ? { Runtime: settings.runtime } : {}),
      NetworkMode: settings.network,
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      PidsLimit: settings.pidsLimit ?? 256,
      Memory: settings.memoryBytes ?? 512 * 1024 * 1024,
      NanoCpus: settings.nanoCpus ?? 1_000_000_000,
      ...o.mounts,
      Binds: [
        `${o.socketDir}:${SANDBOX_SOCKET_DIR}:ro`,
        ...(settings.sourceDir ? [`${settings.sourceDir}:/opt/mango:ro`] : []),
      ],
    },
  };
}

/**
 * The one attach a Work container gets before it starts: its one-shot stdin (the secret or the pooled
 * assignment is the only thing ever written) and its output, hijacked so both directions share a stream.
 */
export async function attachStdio(streams: Docker, containerId: string): Promise<NodeJS.ReadWriteStream> {
  return (await streams.getContainer(containerId).attach({
    stream: true,
    stdin: true,
    stdout: true,
    stderr: true,
    hijack: true,
  })) as NodeJS.ReadWriteStream;
}
