#!/usr/bin/env node
// `mango-server api | files | orchestrator` — the control-plane processes, from the same image as the CLI.
const path = require('node:path');
if (['--version', '-V'].includes(process.argv[2])) {
  // The release version (tools/cli/package.json, kept equal to the root's by tools/release/version.js).
  process.stdout.write(`${require('../package.json').version}\n`);
  process.exit(0);
}
const [command] = process.argv.slice(2);
const entries = {
  api: 'apps/api/src/main.ts',
  files: 'apps/files/src/main.ts',
  orchestrator: 'apps/orchestrator/src/main.ts',
};
if (!entries[command]) {
  process.stderr.write('usage: mango-server api | files | orchestrator | --version\n');
  process.exit(2);
}
require('../../runtime/register.js');
require(path.join(__dirname, '../../..', entries[command]));
