module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'platform-pagination',
  rootDir: __dirname,
};
