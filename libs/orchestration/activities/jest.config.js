module.exports = { ...require('../../../jest.preset.js'), displayName: 'activities', rootDir: __dirname };
