module.exports = { ...require('../../../jest.preset.js'), displayName: 'adapter-model', rootDir: __dirname };
