module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'platform-logging',
  rootDir: __dirname,
};
