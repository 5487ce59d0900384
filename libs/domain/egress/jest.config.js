module.exports = { ...require('../../../jest.preset.js'), displayName: 'domain-egress', rootDir: __dirname };
