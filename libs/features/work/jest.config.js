module.exports = { ...require('../../../jest.preset.js'), displayName: 'feature-work', rootDir: __dirname };
