module.exports = { ...require('../../../jest.preset.js'), displayName: 'platform-http', rootDir: __dirname };
