module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'domain-sessions',
  rootDir: __dirname,
};
