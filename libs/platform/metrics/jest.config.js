module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'platform-metrics',
  rootDir: __dirname,
};
