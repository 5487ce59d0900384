module.exports = { ...require('../../../jest.preset.js'), displayName: 'adapter-docker', rootDir: __dirname };
