module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'platform-secrets',
  rootDir: __dirname,
};
