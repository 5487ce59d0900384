#!/usr/bin/env node
// `mango-server api | files | orchestrator` — the control-plane processes, from the same image as the CLI.
const path = require('node:path');
const [command] = process.argv.slice(2);
const entries = {
  api: 'apps/api/src/main.ts',
  files: 'apps/files/src/main.ts',
  orchestrator: 'apps/orchestrator/src/main.ts',
};
if (!entries[command]) {
  process.stderr.write('usage: mango-server api | files | orchestrator\n');
  process.exit(2);
}
require('../../runtime/register.js');
require(path.join(__dirname, '../../..', entries[command]));
