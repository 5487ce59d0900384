#!/usr/bin/env node
// The npm package's build (its `prepack` script, so plain `npm pack` in this folder ships a complete package):
//   dist/*.js, dist/*.d.ts       CommonJS and its declarations (tsc, tsconfig.build.json)
//   dist/index.mjs, index.d.mts  the ES module entry: Node's "ES module wrapper" for dual packages
//                                (nodejs.org/api/packages.html), which re-exports the CommonJS build by name.
//                                One implementation behind both entries, so `instanceof NotFoundError` holds
//                                whether a program imports or requires the SDK (no dual-package hazard).
// `node scripts/build.js clean` removes dist/ again (the `postpack` script), so packing leaves the tree as it was.
'use strict';
const { execFileSync } = require('node:child_process');
const { rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const pkg = join(__dirname, '..');
const dist = join(pkg, 'dist');
rmSync(dist, { recursive: true, force: true });
if (process.argv[2] === 'clean') process.exit(0);

// TypeScript from the repository's node_modules (resolved upwards from this folder).
const tsc = require.resolve('typescript/bin/tsc', { paths: [pkg] });
execFileSync(process.execPath, [tsc, '-p', join(pkg, 'tsconfig.build.json'), '--outDir', dist], {
  stdio: 'inherit',
});

// The names the CommonJS entry exports at run time (type-only exports have no value to re-export).
const names = Object.keys(require(join(dist, 'index.js')))
  .filter((n) => n !== '__esModule' && n !== 'default')
  .sort();
if (!names.includes('MangoClient'))
  throw new Error(`dist/index.js exports no MangoClient: ${names.join(', ')}`);
for (const n of names) {
  if (!/^[A-Za-z_$][\w$]*$/.test(n)) throw new Error(`not an identifier, cannot re-export: ${n}`);
}
writeFileSync(
  join(dist, 'index.mjs'),
  `// The ES module entry of @mango/sdk: the CommonJS build (./index.js), re-exported by name.\n` +
    `import sdk from './index.js';\n\nexport const {\n${names.map((n) => `  ${n},\n`).join('')}} = sdk;\n`,
);
writeFileSync(join(dist, 'index.d.mts'), `export * from './index.js';\n`);
