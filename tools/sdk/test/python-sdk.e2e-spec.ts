import { LiveTarget, runLiveSuite, startLiveTarget } from './support';

/** The Python SDK (libs/sdk/python) against a real apps/api process: `pytest tests/live`. */
describe('Python SDK against a real apps/api process', () => {
  let target: LiveTarget;
  beforeAll(async () => {
    target = await startLiveTarget('sdkpy');
  });
  afterAll(() => target?.api.close());

  it('passes every live test: Agents + paging, errors, the Work flow with the secret, Session events + SSE resume', async () => {
    const run = await runLiveSuite('python-live', target.env);
    if (run.code !== 0) throw new Error(`python-live exited ${run.code}:\n${run.output}`);
    expect(run.report).toMatchObject({ numFailedTests: 0, numPendingTests: 0, numFailedTestSuites: 0 });
    expect(run.report.numPassedTests).toBe(5);
  });
});
