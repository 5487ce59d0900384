module.exports = { ...require('../../jest.preset.js'), displayName: 'journey', rootDir: __dirname };
