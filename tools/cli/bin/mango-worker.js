#!/usr/bin/env node
// `mango-worker docker` — the Docker supervisor; `mango-worker item` — the runner inside each Work container.
const path = require('node:path');
const [command, ...rest] = process.argv.slice(2);
if (command === 'volumes') {
  // `mango-worker volumes list|prune [--apply]`: Session workspaces on this Docker host and their orphans.
  require('../../runtime/register.js');
  require(path.join(__dirname, '../../..', 'apps/supervisor/src/volumes-main.ts')).runVolumesCli(rest);
  return;
}
// `mango-worker docker --workspace-root DIR` (or --workspace-root=DIR) is MANGO_WORKER_WORKSPACE_ROOT.
for (let i = 0; i < rest.length; i++) {
  const m = /^--workspace-root(?:=(.*))?$/.exec(rest[i]);
  if (command !== 'docker' || !m) {
    process.stderr.write(`mango-worker: unknown argument ${rest[i]}\n`);
    process.exit(2);
  }
  const value = m[1] ?? rest[++i];
  if (!value) {
    process.stderr.write('mango-worker: --workspace-root needs a directory\n');
    process.exit(2);
  }
  process.env.MANGO_WORKER_WORKSPACE_ROOT = value;
}
const entries = { docker: 'apps/supervisor/src/main.ts', item: 'apps/supervisor/src/item-main.ts' };
if (!entries[command]) {
  process.stderr.write(
    'usage: mango-worker docker [--workspace-root DIR] | mango-worker item | mango-worker volumes list|prune [--apply]\n',
  );
  process.exit(2);
}
require('../../runtime/register.js');
require(path.join(__dirname, '../../..', entries[command]));
