import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { parentPort, Worker } from 'node:worker_threads';
import { bundleWorkflowCode, DefaultLogger, type BundleOptions, type Logger } from '@temporalio/worker';

const ROOT = join(__dirname, '../../..');

/** The workflow lib's entry: the SDK bundles it (webpack + swc) into the deterministic sandbox. */
export const WORKFLOWS_PATH = join(ROOT, 'libs/orchestration/workflows/src/index.ts');

/**
 * The workflow interceptors (libs/platform/tracing/src/workflow-interceptors.ts): Temporal's OpenTelemetry
 * workflow interceptors (@temporalio/interceptors-opentelemetry, see libs/platform/tracing/src/temporal.ts)
 * for the calls that carry a trace, compiled into every workflow bundle, tracing configured or not: the
 * workflow code a history replays against never depends on configuration (without tracing no call carries
 * a trace and no span is made). The SDK's bundler swaps the module's workflow imports for the real ones.
 * A path, not an @mango alias: the test global set-up bundles before any alias mapping exists.
 */
export const WORKFLOW_INTERCEPTOR_MODULES: string[] = [
  require.resolve(join(ROOT, 'libs/platform/tracing/src/workflow-interceptors.ts')),
];

/** Resolves the @mango/* aliases inside the bundle, from tsconfig.base.json like every other runtime. */
export function workflowBundlerOptions(): Pick<BundleOptions, 'webpackConfigHook'> {
  const { compilerOptions } = require(join(ROOT, 'tsconfig.base.json')) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  const alias: Record<string, string> = {};
  for (const [name, [target]] of Object.entries(compilerOptions.paths)) alias[name] = join(ROOT, target!);
  return {
    webpackConfigHook: (config) => ({
      ...config,
      resolve: { ...config.resolve, alias: { ...(config.resolve?.alias as object), ...alias } },
    }),
  };
}

/** Bundles the workflows (webpack + swc) with the workflow interceptors, in this thread. */
export async function workflowBundleCode(logger?: Logger): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    // The workflow interceptors are part of every bundle (see WORKFLOW_INTERCEPTOR_MODULES).
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    ...workflowBundlerOptions(),
    ...(logger ? { logger } : {}),
  });
  return code;
}

/**
 * Bundles the workflows in a worker thread and answers the code: what webpack loads and keeps goes with
 * the thread. Bundled on the orchestrator's main thread instead, its heap stayed about 100 MB larger for
 * the process's life, and every young-generation collection of a busy orchestrator paid for it
 * (`npm run bench:sessions`: about a fifth more orchestrator CPU per tool round trip).
 */
export async function bundleWorkflowsInThread(): Promise<string> {
  // The thread loads the TypeScript sources as the apps do (a no-op where Node's -r already did), then
  // this module, which requires what it needs itself: an eval'd thread's own require() resolves packages
  // from the process's cwd (`/` in the images), not from this file.
  const worker = new Worker(
    `require(${JSON.stringify(join(ROOT, 'tools/runtime/register.js'))});
     require(${JSON.stringify(__filename)}).answerBundleToParent();`,
    { eval: true },
  );
  try {
    const reply = await new Promise<{ code?: string; error?: string }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.once('exit', (exitCode) =>
        reject(new Error(`the workflow bundler thread exited (${exitCode})`)),
      );
    });
    if (reply.error !== undefined) throw new Error(`bundling the workflows failed: ${reply.error}`);
    return reply.code!;
  } finally {
    await worker.terminate();
  }
}

/** The bundler thread's side of bundleWorkflowsInThread: bundles, then posts the code or the error. */
export function answerBundleToParent(): void {
  workflowBundleCode(new DefaultLogger('WARN')).then(
    (code) => parentPort!.postMessage({ code }),
    (err: unknown) => parentPort!.postMessage({ error: String((err as Error)?.stack ?? err) }),
  );
}

/**
 * Bundles the workflows once and writes the bundle to `path`, for MANGO_WORKFLOW_BUNDLE (orchestrators that
 * start often, like the test suites', then skip webpack at start).
 */
export async function writeWorkflowBundle(path: string): Promise<void> {
  writeFileSync(path, await workflowBundleCode());
}
