module.exports = { ...require('../../../jest.preset.js'), displayName: 'domain-memory', rootDir: __dirname };
