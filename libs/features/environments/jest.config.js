module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'feature-environments',
  rootDir: __dirname,
};
