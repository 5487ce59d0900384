module.exports = { ...require('../../../jest.preset.js'), displayName: 'workflows', rootDir: __dirname };
