module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'platform-config',
  rootDir: __dirname,
};
