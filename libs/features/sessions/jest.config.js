module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'feature-sessions',
  rootDir: __dirname,
};
