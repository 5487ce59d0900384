module.exports = { ...require('../../../jest.preset.js'), displayName: 'feature-vaults', rootDir: __dirname };
