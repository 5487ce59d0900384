// Two files at a time: the longest suites here mostly wait on real clocks (a one-minute cron, lease
// expiries), so a second worker overlaps that waiting instead of adding to the critical path of npm test.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'orchestrator',
  rootDir: __dirname,
  maxWorkers: 2,
};
