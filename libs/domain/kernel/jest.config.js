module.exports = { ...require('../../../jest.preset.js'), displayName: 'domain-kernel', rootDir: __dirname };
