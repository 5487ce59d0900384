module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'feature-idempotency',
  rootDir: __dirname,
};
