const preset = require('../../jest.preset.js');

// age-encryption and its @noble/@scure dependencies ship only ES modules; Jest's CommonJS runtime needs
// them transpiled (Node itself loads them with require). The same SWC transform, for those packages only.
const ESM_ONLY = ['age-encryption', '@noble', '@scure'];

module.exports = {
  ...preset,
  displayName: 'cli',
  rootDir: __dirname,
  transform: {
    ...preset.transform,
    '^.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
};
