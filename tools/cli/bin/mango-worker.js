#!/usr/bin/env node
// `mango-worker docker` — the Docker supervisor; `mango-worker item` — the runner inside each Work container.
const path = require('node:path');
const [command] = process.argv.slice(2);
const entries = { docker: 'apps/supervisor/src/main.ts', item: 'apps/supervisor/src/item-main.ts' };
if (!entries[command]) {
  process.stderr.write('usage: mango-worker docker | mango-worker item\n');
  process.exit(2);
}
require('../../runtime/register.js');
require(path.join(__dirname, '../../..', entries[command]));
