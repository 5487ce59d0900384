module.exports = { ...require('../../../jest.preset.js'), displayName: 'feature-agents', rootDir: __dirname };
