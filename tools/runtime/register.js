// Runs Mango's TypeScript sources directly: SWC transpiles on load (decorator metadata on) and resolves
// the @mango/* aliases from tsconfig.base.json. Used by `node -r ./tools/runtime/register.js <entry.ts>`.
const path = require('node:path');
process.env.SWC_NODE_PROJECT =
  process.env.SWC_NODE_PROJECT || path.join(__dirname, '../../tsconfig.base.json');
require('@swc-node/register');
