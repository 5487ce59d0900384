import { basename } from 'node:path';

/** A runtime as `docker info` reports it (`Runtimes`: name → path and the arguments the daemon adds). */
export interface DeclaredRuntime {
  path?: string;
  runtimeArgs?: string[];
}

/** The OCI runtime the supervisor's containers run under (MANGO_WORKER_RUNTIME), checked against the daemon. */
export interface SandboxRuntime {
  /** Passed as `HostConfig.Runtime`. */
  name: string;
  /** gVisor (`runsc`): a user-space kernel between the sandbox and the host (docs/operator-guide.md "gVisor"). */
  gvisor: boolean;
  /** The pids limit that gives the sandbox about the process room runc's default 256 gives (see GVISOR_PIDS_LIMIT). */
  pidsLimit?: number;
}

/**
 * The pids limit of a gVisor sandbox. Under runsc (ptrace platform, Debian's 0.0~20221219) the container's
 * pids cgroup counts the sandbox's own host threads and one stub process per sandboxed process, not the
 * sandboxed processes: at runc's 256 a Python parent with 30 live children already brought the whole
 * sandbox down (the Go runtime could not start a thread), at 2048 240 live children ran
 * (docs/security-model-notes/gvisor.md). Exceeding it ends the sandbox instead of failing one fork.
 */
export const GVISOR_PIDS_LIMIT = 2048;

/** The runsc flag that lets a sandboxed process connect to a host unix socket (the Work API socket). */
const HOST_UDS = /^--?host-uds(?:=|\s+)(open|all)$/;
const DEPRECATED_HOST_UDS = /^--?fsgofer-host-uds(?:=true)?$/;

/**
 * MANGO_WORKER_RUNTIME resolved against the daemon's declared runtimes (`docker info` `Runtimes`): unset is
 * the daemon's default runtime (nothing is passed); a name the daemon does not declare, or a gVisor runtime
 * whose arguments do not let the sandbox connect to the Work API socket, stops the supervisor at boot with
 * a message that says how to declare it, rather than failing every item later.
 */
export function resolveSandboxRuntime(
  requested: string | undefined,
  declared: Record<string, DeclaredRuntime> | undefined,
): SandboxRuntime | undefined {
  if (requested === undefined || requested === '') return undefined;
  const names = Object.keys(declared ?? {}).sort();
  const runtime = declared?.[requested];
  if (!runtime)
    throw new Error(
      `MANGO_WORKER_RUNTIME=${requested} is not a runtime this Docker daemon declares ` +
        `(it declares: ${names.join(', ') || 'none'}). Declare it in the daemon's daemon.json "runtimes" ` +
        `(for gVisor: "runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=none", "--host-uds=open"]}) ` +
        `and restart dockerd, or unset MANGO_WORKER_RUNTIME (docs/operator-guide.md "gVisor").`,
    );
  const gvisor = /^runsc/.test(basename(runtime.path ?? requested));
  if (gvisor) {
    const args = runtime.runtimeArgs ?? [];
    if (!args.some((a) => HOST_UDS.test(a) || DEPRECATED_HOST_UDS.test(a)))
      throw new Error(
        `MANGO_WORKER_RUNTIME=${requested} is gVisor (${runtime.path}) declared without "--host-uds=open": ` +
          `its sandboxes could not connect to the Work API socket, so no item could run. Add "--host-uds=open" ` +
          `to its "runtimeArgs" in daemon.json and restart dockerd (docs/operator-guide.md "gVisor").`,
      );
  }
  return { name: requested, gvisor, ...(gvisor ? { pidsLimit: GVISOR_PIDS_LIMIT } : {}) };
}
