module.exports = { ...require('../../../jest.preset.js'), displayName: 'domain-vaults', rootDir: __dirname };
