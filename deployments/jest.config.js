module.exports = { ...require('../jest.preset.js'), displayName: 'deployments', rootDir: __dirname };
