module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'platform-egress',
  rootDir: __dirname,
};
