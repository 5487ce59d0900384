module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'adapter-webhooks',
  rootDir: __dirname,
};
