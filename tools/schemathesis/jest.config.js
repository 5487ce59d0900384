module.exports = { ...require('../../jest.preset.js'), displayName: 'api-fuzz', rootDir: __dirname };
