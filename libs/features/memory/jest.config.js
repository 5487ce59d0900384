module.exports = { ...require('../../../jest.preset.js'), displayName: 'feature-memory', rootDir: __dirname };
