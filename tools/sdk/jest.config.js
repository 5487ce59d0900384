module.exports = { ...require('../../jest.preset.js'), displayName: 'sdk-conformance', rootDir: __dirname };
