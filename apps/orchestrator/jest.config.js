// The longest suites here mostly wait on real clocks (a one-minute cron, lease expiries), so two files at a
// time overlap that waiting. The workflows are bundled once per run (test/global-setup.ts), not by every
// orchestrator a suite starts.
//
// npm test runs this suite as two Nx tasks (project.json test-a / test-b) of one worker each: the same two
// files at a time as one task of two workers (each file starts three or four processes; more at once on
// 2 cores pushed set-ups past their bounds), but two shorter tasks Nx can pack beside the other long suites.
// MANGO_TEST_GROUP=a runs the files in GROUP_A, =b every other file, so a new file is always in one of them.
// Unset (jest -c apps/orchestrator/jest.config.js): every file, two workers.
// GROUP_A is balanced by measured durations (tmp/test-results/orchestrator-*.json): about 870 s against 795 s
// in npm test on an otherwise idle 2-core machine, 1,225 s against 1,260 s on a loaded one.
const GROUP_A = [
  'session-turn.e2e-spec.ts',
  'deployments.e2e-spec.ts',
  'session-control.e2e-spec.ts',
  'session-load.e2e-spec.ts',
  'tracing.e2e-spec.ts',
  'model-endpoint.e2e-spec.ts',
  'metrics.e2e-spec.ts',
];
const group = process.env.MANGO_TEST_GROUP;
if (group && group !== 'a' && group !== 'b') throw new Error(`MANGO_TEST_GROUP must be a or b, not ${group}`);
const inGroupA = GROUP_A.map((f) => `/test/${f.replace(/\./g, '\\.')}$`);

module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'orchestrator',
  rootDir: __dirname,
  maxWorkers: group ? 1 : 2,
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  ...(group === 'a' ? { testRegex: inGroupA, testMatch: undefined } : {}),
  ...(group === 'b' ? { testPathIgnorePatterns: ['/node_modules/', ...inGroupA] } : {}),
};
