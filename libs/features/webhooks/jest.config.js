module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'feature-webhooks',
  rootDir: __dirname,
};
