module.exports = { ...require('../../jest.preset.js'), displayName: 'release', rootDir: __dirname };
