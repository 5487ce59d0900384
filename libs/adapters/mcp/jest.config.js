module.exports = { ...require('../../../jest.preset.js'), displayName: 'adapter-mcp', rootDir: __dirname };
