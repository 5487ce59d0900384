module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'domain-webhooks',
  rootDir: __dirname,
};
