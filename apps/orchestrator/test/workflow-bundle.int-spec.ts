import { bundleWorkflowsInThread } from '../src/workflow-bundle';

/**
 * An orchestrator without MANGO_WORKFLOW_BUNDLE bundles its workflows at start in a worker thread (the test
 * suites load a prebuilt bundle instead, so this is the one test of that path).
 */
describe('bundling the workflows in a worker thread', () => {
  it('answers the workflow code with the workflow interceptors compiled in', async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    const code = await bundleWorkflowsInThread();
    expect(code).toContain('sessionWorkflow');
    expect(code).toContain('TracedInboundInterceptor');
    // The bundler's memory stayed in the thread: this heap grew by about the code's size, not webpack's.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(50 * 1024 * 1024);
  }, 120_000);
});
