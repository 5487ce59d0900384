import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { bundleWorkflowCode, type BundleOptions } from '@temporalio/worker';

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

/**
 * Bundles the workflows once and writes the bundle to `path`, for MANGO_WORKFLOW_BUNDLE (orchestrators that
 * start often, like the test suites', then skip webpack at start).
 */
export async function writeWorkflowBundle(path: string): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    // The OpenTelemetry workflow interceptors are part of every bundle (see WORKFLOW_INTERCEPTOR_MODULES).
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    ...workflowBundlerOptions(),
  });
  writeFileSync(path, code);
}
