module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'domain-work-lease',
  rootDir: __dirname,
};
