// Every file starts its own orchestrator (test/support.ts): the workflows are bundled once per run by the
// orchestrator suites' global set-up, not by each of them.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'supervisor',
  rootDir: __dirname,
  globalSetup: '<rootDir>/../orchestrator/test/global-setup.ts',
  globalTeardown: '<rootDir>/../orchestrator/test/global-teardown.ts',
};
