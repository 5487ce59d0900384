module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'platform-temporal',
  rootDir: __dirname,
};
