import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { bundleWorkflowsInThread } from '../src/workflow-bundle';

const ROOT = join(__dirname, '../../..');

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

  it('bundles from any working directory, as the images run it (cwd /: nothing resolves from the cwd)', () => {
    const run = spawnSync(
      process.execPath,
      [
        '-r',
        join(ROOT, 'tools/runtime/register.js'),
        '-e',
        `require(${JSON.stringify(join(ROOT, 'apps/orchestrator/src/workflow-bundle.ts'))})
           .bundleWorkflowsInThread()
           .then((code) => process.stdout.write(String(code.includes('sessionWorkflow'))), (err) => {
             process.stderr.write(String(err));
             process.exit(1);
           });`,
      ],
      { cwd: '/', encoding: 'utf8', timeout: 120_000, env: { PATH: process.env.PATH ?? '' } },
    );
    expect([run.status, run.stdout, run.stderr.slice(0, 500)]).toEqual([0, 'true', '']);
  }, 150_000);
});
