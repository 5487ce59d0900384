module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'domain-deployments',
  rootDir: __dirname,
};
