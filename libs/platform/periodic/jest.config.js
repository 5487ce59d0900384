module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'platform-periodic',
  rootDir: __dirname,
};
