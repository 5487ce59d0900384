import type { WorkflowBundleOption } from '@temporalio/worker';
import { workflowBundleCode } from '../src/workflow-bundle';

/**
 * The workflow code as the orchestrator runs it (workflowBundleCode: with the OpenTelemetry workflow
 * interceptors compiled in), for a Worker a test creates itself: the bundle this Jest run's global set-up
 * built from this checkout's sources (MANGO_TEST_WORKFLOW_BUNDLE), else one bundled now. Bundling with
 * webpack takes about 10 s on the 2-core CI machine; call this once per file, not per Worker.
 */
export async function testWorkflowBundle(): Promise<WorkflowBundleOption> {
  const codePath = process.env.MANGO_TEST_WORKFLOW_BUNDLE;
  return codePath ? { codePath } : { code: await workflowBundleCode() };
}
