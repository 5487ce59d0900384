module.exports = { ...require('../../jest.preset.js'), displayName: 'supervisor', rootDir: __dirname };
