module.exports = { ...require('../../../jest.preset.js'), displayName: 'platform-ids', rootDir: __dirname };
