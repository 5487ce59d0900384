#!/usr/bin/env node
// The `mango` operator CLI: `npx mango …` from the repo root, `mango …` in the images.
require('../../runtime/register.js');
require('../src/main.ts')
  .main(process.argv.slice(2))
  .then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`mango: ${err && err.message ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
