import { LiveTarget, runLiveSuite, startLiveTarget } from './support';

/** The Go SDK (libs/sdk/go) against a real apps/api process: `go test -tags live` (mango/live_test.go). */
describe('Go SDK against a real apps/api process', () => {
  let target: LiveTarget;
  beforeAll(async () => {
    target = await startLiveTarget('sdkgo');
  });
  afterAll(() => target?.api.close());

  it('passes every live test: Agents + paging, errors, the Work flow with the secret, Session events + SSE resume', async () => {
    const run = await runLiveSuite('go-live', target.env);
    if (run.code !== 0) throw new Error(`go-live exited ${run.code}:\n${run.output}`);
    expect(run.report).toMatchObject({ numFailedTests: 0, numPendingTests: 0, numFailedTestSuites: 0 });
    expect(run.report.numPassedTests).toBe(4);
    expect(run.output).toContain('--- PASS: TestLiveSessionEventsListAndStreamWithResume');
  });
});
