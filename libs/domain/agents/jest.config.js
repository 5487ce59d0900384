module.exports = { ...require('../../../jest.preset.js'), displayName: 'domain-agents', rootDir: __dirname };
