module.exports = { ...require('../../jest.preset.js'), displayName: 'worker-runtime', rootDir: __dirname };
