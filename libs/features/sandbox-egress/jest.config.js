module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'feature-sandbox-egress',
  rootDir: __dirname,
};
