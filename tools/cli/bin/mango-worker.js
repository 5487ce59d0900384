#!/usr/bin/env node
// `mango-worker docker` — the Docker supervisor; `mango-worker item` — the runner inside each Work container.
const path = require('node:path');
if (['--version', '-V'].includes(process.argv[2])) {
  // The release version (tools/cli/package.json, kept equal to the root's by tools/release/version.js).
  process.stdout.write(`${require('../package.json').version}\n`);
  process.exit(0);
}
const [command, ...rest] = process.argv.slice(2);
if (command === 'volumes') {
  // `mango-worker volumes list|prune [--apply]`: Session workspaces on this Docker host and their orphans.
  require('../../runtime/register.js');
  require(path.join(__dirname, '../../..', 'apps/supervisor/src/volumes-main.ts')).runVolumesCli(rest);
  return;
}
// `mango-worker docker --workspace-root DIR` (or --workspace-root=DIR) is MANGO_WORKER_WORKSPACE_ROOT;
// `--custom-tools FILE` (or --custom-tools=FILE) is MANGO_WORKER_CUSTOM_TOOLS.
const FLAGS = {
  '--workspace-root': 'MANGO_WORKER_WORKSPACE_ROOT',
  '--custom-tools': 'MANGO_WORKER_CUSTOM_TOOLS',
};
for (let i = 0; i < rest.length; i++) {
  const m = /^(--workspace-root|--custom-tools)(?:=(.*))?$/.exec(rest[i]);
  if (command !== 'docker' || !m) {
    process.stderr.write(`mango-worker: unknown argument ${rest[i]}\n`);
    process.exit(2);
  }
  const value = m[2] ?? rest[++i];
  if (!value) {
    process.stderr.write(
      `mango-worker: ${m[1]} needs a ${m[1] === '--custom-tools' ? 'file' : 'directory'}\n`,
    );
    process.exit(2);
  }
  process.env[FLAGS[m[1]]] = value;
}
const entries = { docker: 'apps/supervisor/src/main.ts', item: 'apps/supervisor/src/item-main.ts' };
if (!entries[command]) {
  process.stderr.write(
    'usage: mango-worker docker [--workspace-root DIR] [--custom-tools FILE] | mango-worker item | mango-worker volumes list|prune [--apply] | mango-worker --version\n',
  );
  process.exit(2);
}
require('../../runtime/register.js');
require(path.join(__dirname, '../../..', entries[command]));
