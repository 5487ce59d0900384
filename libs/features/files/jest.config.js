module.exports = { ...require('../../../jest.preset.js'), displayName: 'feature-files', rootDir: __dirname };
