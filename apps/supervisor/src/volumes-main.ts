// `mango-worker volumes list|prune [--apply]`: the operator's view of the Session workspaces (named volumes
// and --workspace-root directories) on this Docker host, and removal of the orphans — workspaces whose
// Session was deleted. Dry run unless --apply. See docs/adr/0013-session-workspace-gc.md.
import {
  createDockerClient,
  listSessionWorkspaces,
  removeSessionWorkspace,
  SessionWorkspace,
} from '@mango/adapter-docker';
import { ConfigError, loadConfig } from '@mango/platform-config';
import { MangoClient, MangoError } from '@mango/sdk';
import { VolumesEnv } from './volumes.env';

const USAGE = `usage: mango-worker volumes list|prune [--apply] [--workspace-root DIR]
  env: MANGO_BASE_URL, MANGO_API_KEY (a key of the Environment's Workspace), MANGO_ENVIRONMENT_ID,
       DOCKER_HOST, MANGO_WORKER_WORKSPACE_ROOT (or --workspace-root)
`;

export type WorkspaceState = 'live' | 'orphan' | 'in_use' | 'other_environment' | 'unlabelled' | 'unknown';

/** Why a workspace is (not) an orphan: only `orphan` is ever removed. */
export async function classify(
  ws: SessionWorkspace,
  environmentId: string,
  lookup: (sessionId: string) => Promise<{ environmentId: string } | 'deleted' | 'unknown'>,
): Promise<WorkspaceState> {
  if (ws.environmentId !== null && ws.environmentId !== environmentId) return 'other_environment';
  // Volumes made before volumes carried their Environment: another Workspace's Session would look deleted.
  if (ws.kind === 'volume' && ws.environmentId === null) return 'unlabelled';
  const found = await lookup(ws.sessionId);
  if (found === 'unknown') return 'unknown';
  if (found !== 'deleted')
    return found.environmentId === environmentId ? (ws.inUse ? 'in_use' : 'live') : 'other_environment';
  return ws.inUse ? 'in_use' : 'orphan';
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  let apply = false;
  let env: VolumesEnv;
  try {
    env = loadConfig(VolumesEnv);
  } catch (err) {
    if (err instanceof ConfigError) return usage(err.message);
    throw err;
  }
  let root = env.MANGO_WORKER_WORKSPACE_ROOT || undefined;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--apply') apply = true;
    else if (rest[i] === '--workspace-root') root = rest[++i];
    else if (rest[i].startsWith('--workspace-root=')) root = rest[i].slice('--workspace-root='.length);
    else return usage(`unknown argument ${rest[i]}`);
  }
  if (command !== 'list' && command !== 'prune') return usage();
  if (apply && command !== 'prune') return usage('--apply is for prune');
  if (root !== undefined && !root.startsWith('/')) return usage('--workspace-root must be an absolute path');
  const { MANGO_BASE_URL: baseUrl, MANGO_API_KEY: apiKey, MANGO_ENVIRONMENT_ID: environmentId } = env;
  const client = new MangoClient({ baseUrl, apiKey, maxRetries: 2 });
  // The key must see the Environment: Sessions of any other Workspace would otherwise all look deleted.
  try {
    await client.environments.retrieve(environmentId);
  } catch (err) {
    process.stderr.write(
      `mango-worker volumes: cannot read Environment ${environmentId} with this key (${String((err as Error).message)})\n`,
    );
    return 2;
  }
  const lookup = async (sessionId: string) => {
    try {
      const s = (await client.sessions.retrieve(sessionId)) as { environment_id: string };
      return { environmentId: s.environment_id };
    } catch (err) {
      return err instanceof MangoError && err.status === 404 ? ('deleted' as const) : ('unknown' as const);
    }
  };
  const docker = createDockerClient(env.DOCKER_HOST);
  const all = await listSessionWorkspaces(docker, root);
  let orphans = 0;
  let removed = 0;
  for (const ws of all) {
    const state = await classify(ws, environmentId, lookup);
    let note = '';
    if (state === 'orphan') {
      orphans++;
      if (command === 'prune' && apply) {
        try {
          await removeSessionWorkspace(docker, ws);
          removed++;
          note = '\tremoved';
        } catch (err) {
          note = `\tnot removed: ${String((err as Error).message)}`;
        }
      } else if (command === 'prune') note = '\twould remove';
    }
    process.stdout.write(`${state}\t${ws.kind}\t${ws.sessionId}\t${ws.name}${note}\n`);
  }
  const tail =
    command === 'list'
      ? `${all.length} workspaces, ${orphans} orphaned`
      : apply
        ? `${removed} of ${orphans} orphaned workspaces removed`
        : `${orphans} orphaned workspaces would be removed (dry run; pass --apply to remove them)`;
  process.stdout.write(`${tail}\n`);
  return removed === orphans || command === 'list' || !apply ? 0 : 1;
}

function usage(problem?: string): number {
  process.stderr.write(`${problem ? `mango-worker volumes: ${problem}\n` : ''}${USAGE}`);
  return 2;
}

/** Runs the command and exits the process with its status. */
export function runVolumesCli(argv: string[]): void {
  main(argv).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`mango-worker volumes: ${String((err as Error)?.message ?? err)}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) runVolumesCli(process.argv.slice(2));
