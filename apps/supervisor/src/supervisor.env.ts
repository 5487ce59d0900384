import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { ObservabilityEnv } from '@mango/platform-tracing';
import { idPattern } from '@mango/domain-kernel';

/** /run/mango-worker for root (the usual supervisor), else a per-user directory under the temp dir. */
function defaultSocketDir(): string {
  return process.getuid?.() === 0
    ? '/run/mango-worker'
    : join(tmpdir(), `mango-worker-${process.getuid?.() ?? 0}`);
}

/** Mango's version (the root package.json, which every image carries at /opt/mango/package.json). */
const MANGO_VERSION: string = JSON.parse(
  readFileSync(join(__dirname, '../../../package.json'), 'utf8'),
).version;

/** Every variable (metrics and tracing: ObservabilityEnv) `mango-worker docker` reads, validated once at boot. It never reads MANGO_API_KEY. */
export class SupervisorEnv extends ObservabilityEnv {
  @Matches(/^mango_ek_[A-Za-z0-9_-]{43}$/, {
    message: 'MANGO_ENVIRONMENT_KEY must be an Environment key (mango_ek_…)',
  })
  MANGO_ENVIRONMENT_KEY!: string;

  @Matches(idPattern('environment'), { message: 'MANGO_ENVIRONMENT_ID must be an env_ id' })
  MANGO_ENVIRONMENT_ID!: string;

  /** Where the supervisor reaches the Mango API. */
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_BASE_URL!: string;

  /**
   * Where the supervisor keeps one Work API socket directory per running container (bind-mounted into it
   * read-only at /run/mango). It must be a path on the Docker host: run the supervisor there, or mount the
   * same host path at the same place in the supervisor's container.
   */
  @Matches(/^\/[^\0]{0,80}$/, {
    message: 'MANGO_WORKER_SOCKET_DIR must be an absolute path of at most 80 characters',
  })
  MANGO_WORKER_SOCKET_DIR: string = defaultSocketDir();

  /**
   * `mango-worker docker --workspace-root DIR`: each Session's workspace is the host directory
   * DIR/<session id> (bind-mounted at /workspace) instead of a named volume, so an operator can stage File
   * and Git inputs there. A path on the Docker host (like MANGO_WORKER_SOCKET_DIR); it must exist.
   */
  @IsOptional()
  @Matches(/^\/[^\0]{0,200}$/, {
    message: 'MANGO_WORKER_WORKSPACE_ROOT must be an absolute path of at most 200 characters',
  })
  MANGO_WORKER_WORKSPACE_ROOT?: string;

  /**
   * `mango-worker docker --custom-tools FILE`: the operator custom tools this worker serves (JSON or YAML;
   * docs/operator-guide.md "Operator custom tools"). Read and validated at start: a bad file stops the
   * supervisor with a message naming the entry and field.
   */
  @IsOptional()
  @Matches(/^[^\0]{1,1024}$/, { message: 'MANGO_WORKER_CUSTOM_TOOLS must be a file path' })
  MANGO_WORKER_CUSTOM_TOOLS?: string;

  /** unix:///path/docker.sock or tcp://host:port; the default socket when unset. */
  @IsOptional()
  @Matches(/^(unix|tcp):\/\/\S+$/, { message: 'DOCKER_HOST must be unix://… or tcp://…' })
  DOCKER_HOST?: string;

  /**
   * The sandbox image: the userland, node and the precompiled Mango item runner (MANGO_ITEM_ENTRY). Default:
   * the sandbox image of this version, `mango-sandbox:<version>` (deployments/docker/sandbox.Dockerfile).
   */
  @IsString()
  MANGO_WORKER_IMAGE: string = `mango-sandbox:${MANGO_VERSION}`;

  /** Development only: bind-mount this source tree read-only at /opt/mango instead of baking it in. */
  @IsOptional()
  @Matches(/^\//, { message: 'MANGO_WORKER_SOURCE_DIR must be an absolute path' })
  MANGO_WORKER_SOURCE_DIR?: string;

  /**
   * Sandbox network. `none` (default): sealed, Mango reachable only through the Work API socket. Internet
   * egress for tools is an explicit operator choice: `host` (the host's whole network, loopback services
   * included — see docs/operator-guide.md "Sandbox network") or the name of a Docker network.
   */
  @Matches(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, {
    message: 'MANGO_WORKER_NETWORK must be none, host or a Docker network name',
  })
  MANGO_WORKER_NETWORK: string = 'none';

  /**
   * Sandbox egress (ADR 0021, docs/operator-guide.md "Sandbox egress"): `true` honours an Environment's
   * `networking: {type: "unrestricted"}` (every public host through the egress proxy); `false` (default)
   * refuses every connection of such an Environment (`unrestricted_not_enabled`).
   */
  @IsIn(['true', 'false'])
  MANGO_WORKER_EGRESS_UNRESTRICTED: string = 'false';

  /**
   * Non-public addresses the egress proxy may still reach when an Environment's policy allows the name:
   * comma-separated IPs or CIDR ranges, each with an optional port (`10.1.2.3`, `10.0.0.0/8:443`,
   * `[fd00::/8]:443`). Metadata endpoints and the control plane are refused even then. Checked at start.
   */
  @IsOptional()
  @IsString()
  MANGO_WORKER_EGRESS_ALLOWED_ADDRESSES?: string;

  /**
   * Names the egress proxy resolves without DNS (like Docker's `--add-host`): `name=address` pairs,
   * comma-separated, `|` between several addresses. The addresses are judged like resolved ones.
   */
  @IsOptional()
  @IsString()
  MANGO_WORKER_EGRESS_HOSTS?: string;

  /**
   * The OCI runtime of the sandbox containers (`HostConfig.Runtime`): unset, the daemon's default (runc);
   * `runsc` runs them under gVisor (docs/operator-guide.md "gVisor"); any runtime name the daemon declares.
   * Checked at boot against `docker info`: an undeclared runtime, or a gVisor one declared without
   * `--host-uds=open`, stops the supervisor with a message saying how to declare it.
   */
  @IsOptional()
  @Matches(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, {
    message: 'MANGO_WORKER_RUNTIME must be a runtime name the Docker daemon declares (e.g. runc, runsc)',
  })
  MANGO_WORKER_RUNTIME?: string;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(64)
  MANGO_MAX_CONCURRENT_ITEMS: number = 4;

  /**
   * The warm pool (docs/operator-guide.md "Warm pool"): this many started, hardened containers with no
   * Work, no secret and no workspace wait for healthcheck Work, each used for one item and then removed.
   * 0 disables it (every item starts a cold container).
   */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(8)
  MANGO_WORKER_POOL_SIZE: number = 1;

  /** Identifies this supervisor's containers for startup reconciliation (default: hostname + Environment). */
  @IsOptional()
  @Matches(/^[A-Za-z0-9_.-]{1,128}$/)
  MANGO_SUPERVISOR_ID?: string;

  /** A Session activation ends (final Stop) this long after the Session went idle. */
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  MANGO_SESSION_IDLE_MS: number = 60_000;

  /**
   * How many tool calls of different Threads one Session activation may run at once (docs/worker-contract.md:
   * upstream's `maxConcurrentCalls`, default 1); one Thread's calls always run one at a time.
   */
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(16)
  MANGO_MAX_CONCURRENT_CALLS: number = 1;

  /** The lease TTL item runners ask for; they renew at a third of it (see docs/operator-guide.md, The Docker supervisor: at most 300 s). */
  @Type(() => Number)
  @IsInt()
  @Min(3)
  @Max(300)
  MANGO_WORK_TTL_SECONDS: number = 60;

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  MANGO_LOG_LEVEL: string = 'info';
}
