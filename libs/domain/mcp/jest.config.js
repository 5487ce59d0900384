module.exports = { ...require('../../../jest.preset.js'), displayName: 'domain-mcp', rootDir: __dirname };
