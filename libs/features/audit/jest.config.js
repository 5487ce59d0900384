module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'feature-audit',
  rootDir: __dirname,
};
