module.exports = {
  ...require('../../../jest.preset.js'),
  displayName: 'adapter-object-store',
  rootDir: __dirname,
};
