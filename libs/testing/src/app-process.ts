import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

const ROOT = join(__dirname, '../../..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface AppProcess {
  child: ChildProcess;
  logs: () => string;
  /** Sends a signal and waits for the process to exit; returns its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * How long an app may take to become ready. Start-up transpiles the sources on load (SWC), which on a
 * 2-core CI machine running three suites at once took over 30 s; 120 s by default,
 * `MANGO_TEST_START_TIMEOUT_MS` overrides. A test that asserts a start-up failure passes its own bound.
 */
const START_TIMEOUT_MS = Number(process.env.MANGO_TEST_START_TIMEOUT_MS) || 120_000;

/**
 * A workflow bundle built once per Jest run (apps/orchestrator/test/global-setup.ts, the globalSetup of the
 * suites that start orchestrators): every orchestrator started here loads it (MANGO_WORKFLOW_BUNDLE) instead
 * of bundling the same workflow sources with webpack again. A test's own MANGO_WORKFLOW_BUNDLE wins.
 */
function workflowBundleEnv(entry: string): Record<string, string> {
  const bundle = process.env.MANGO_TEST_WORKFLOW_BUNDLE;
  return bundle && entry === 'apps/orchestrator/src/main.ts' ? { MANGO_WORKFLOW_BUNDLE: bundle } : {};
}

/**
 * apps/api refuses to start without MANGO_PUBLIC_BASE_URL outside development (docs/operator-guide.md):
 * the API started here is reached at its own loopback address, which is what its Work secrets must name.
 * A test that sets MANGO_ENV or MANGO_PUBLIC_BASE_URL itself gets exactly what it set.
 */
function publicBaseUrlEnv(entry: string, env: Record<string, string>): Record<string, string> {
  if (entry !== 'apps/api/src/main.ts' || 'MANGO_ENV' in env || 'MANGO_PUBLIC_BASE_URL' in env) return {};
  return env.MANGO_API_PORT ? { MANGO_PUBLIC_BASE_URL: `http://127.0.0.1:${env.MANGO_API_PORT}` } : {};
}

/**
 * Extra node flags for the apps started here, for profiling a benchmark's server side, e.g.
 * `MANGO_APP_NODE_FLAGS='--cpu-prof --cpu-prof-dir=/tmp/prof'` (flags NODE_OPTIONS refuses). Only for
 * the entries named in MANGO_APP_NODE_FLAGS_FOR (comma-separated, e.g. `apps/api/src/main.ts`) when set.
 */
function nodeFlags(entry: string): string[] {
  const flags = process.env.MANGO_APP_NODE_FLAGS?.trim();
  const only = process.env.MANGO_APP_NODE_FLAGS_FOR?.split(',').map((s) => s.trim());
  return flags && (!only || only.includes(entry)) ? flags.split(/\s+/) : [];
}

/** Every app process started here and not exited yet (in this Jest test file, or this script). */
const running = new Set<ChildProcess>();

/**
 * The safety net of a test file that left an app running (a test that failed before its own stop, or
 * started a second process over the first): killed once the file's own afterAll hooks have run, so the
 * Jest worker can exit instead of hanging on the child's pipes until CI's time limit. Said on stderr,
 * since a test that leaks a process is a test to fix. Registered at the file's root when this module is
 * first loaded by a test file; nothing outside Jest.
 */
function killLeftovers(): Promise<unknown> {
  const left = [...running];
  if (left.length)
    console.error(
      `[testing] ${left.length} app process(es) still running after the test file: killed (pids ${left.map((c) => c.pid).join(', ')})`,
    );
  return Promise.all(
    left.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGKILL');
        }),
    ),
  );
}
try {
  if (typeof afterAll === 'function') afterAll(killLeftovers, 15_000);
} catch {
  // Loaded inside a running test (hooks cannot be added there): no safety net for that file.
}

/**
 * Starts one of Mango's apps as a real child process (`node -r tools/runtime/register.js <entry>`)
 * and waits until `ready()` resolves true.
 */
export async function startApp(
  entry: string,
  env: Record<string, string>,
  ready: (logs: () => string) => Promise<boolean>,
  timeoutMs = START_TIMEOUT_MS,
  /** Node options before the entry (e.g. `--cpu-prof`, which NODE_OPTIONS does not allow). */
  nodeArgs: string[] = [],
): Promise<AppProcess> {
  const child = spawn(
    process.execPath,
    [...nodeFlags(entry), ...nodeArgs, '-r', join(ROOT, 'tools/runtime/register.js'), join(ROOT, entry)],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        ...workflowBundleEnv(entry),
        ...publicBaseUrlEnv(entry, env),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${entry} exited with ${child.exitCode} during start-up:\n${output}`);
    if (await ready(() => output).catch(() => false)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${entry} was not ready after ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    logs: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Resolves once the process has logged a line containing `text`. */
export const logged = (text: string) => async (logs: () => string) => logs().includes(text);

/** Resolves once GET url answers with the given status. */
export const answers =
  (url: string, status = 200) =>
  async () =>
    (await fetch(url)).status === status;
