module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'platform-tracing',
  rootDir: __dirname,
};
