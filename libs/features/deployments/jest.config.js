module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'feature-deployments',
  rootDir: __dirname,
};
