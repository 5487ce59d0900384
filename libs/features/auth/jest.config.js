module.exports = { ...require('../../../jest.preset.js'), displayName: 'feature-auth', rootDir: __dirname };
