// `npm run up`, last step: make `.mango/local.env` hold a Workspace key, a live default Environment and its
// supervisor key, whatever state the API left them in (revoked keys, an archived or deleted Environment, a
// stale or garbled file). Prints what it did, one line each; a failure is one clear line, never a trace.
//   node -r tools/runtime/register.js tools/dev/local-bootstrap.ts <base_url> <env_file>
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { ApiKeysService } from '@mango/feature-auth';
import { createDataSource } from '@mango/persistence';

const WORKSPACE = 'wrkspc_default';
const ENV_NAME = 'local-docker';

type Saved = Record<string, string>;
const say = (s: string) => process.stderr.write(`[up] ${s}\n`);

function readSaved(file: string): Saved {
  if (!existsSync(file)) return {};
  const saved: Saved = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^\s*([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) saved[m[1]!] = m[2]!.trim();
  }
  return saved;
}

async function call(base: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json: any = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: reported below with the status */
  }
  return { status: res.status, body: json, text };
}

function fail(what: string, r: { status: number; body?: any; text: string }): never {
  throw new Error(`${what}: HTTP ${r.status} ${r.body?.error?.message ?? r.text.slice(0, 200)}`);
}

async function main(base: string, file: string): Promise<void> {
  const url = process.env.MANGO_DATABASE_URL;
  if (!url) throw new Error('MANGO_DATABASE_URL is not set');
  const saved = readSaved(file);
  const ds = createDataSource({ url, poolSize: 1, applicationName: 'mango-up' });
  await ds.initialize();
  const keys = new ApiKeysService(ds);
  try {
    let apiKey = saved.MANGO_API_KEY ?? '';
    if (!apiKey || (await call(base, apiKey, 'GET', '/v1/environments?limit=1')).status !== 200) {
      if (apiKey) say('the saved Workspace key no longer authenticates (revoked?): issued a new one');
      else say('issued a Workspace API key');
      apiKey = (await keys.create({ workspaceId: WORKSPACE, label: 'local' })).api_key;
    }

    let envId = saved.MANGO_ENVIRONMENT_ID ?? '';
    if (envId) {
      const r = await call(base, apiKey, 'GET', `/v1/environments/${encodeURIComponent(envId)}`);
      if (r.status === 200 && !r.body.archived_at) {
        /* still live */
      } else {
        say(
          `the saved Environment ${envId} is ${r.status === 200 ? 'archived' : r.status === 404 ? 'gone (deleted)' : `unusable (HTTP ${r.status})`}: choosing another`,
        );
        envId = '';
      }
    }
    if (!envId) {
      const list = await call(base, apiKey, 'GET', '/v1/environments?limit=1000');
      if (list.status !== 200) fail('listing Environments', list);
      const live = (list.body.data as Array<{ id: string; name: string }>).filter((e) =>
        new RegExp(`^${ENV_NAME}(-\\d+)?$`).test(e.name),
      );
      const found = live.find((e) => e.name === ENV_NAME) ?? live[0];
      if (found) {
        envId = found.id;
        say(`using the existing Environment ${found.name} (${envId})`);
      }
    }
    for (let n = 1; !envId && n <= 50; n++) {
      const name = n === 1 ? ENV_NAME : `${ENV_NAME}-${n}`;
      const r = await call(base, apiKey, 'POST', '/v1/environments', {
        name,
        description: 'npm run up: the local Docker supervisor',
      });
      if (r.status === 201 || r.status === 200) {
        envId = r.body.id;
        say(`created the Environment ${name} (${envId})`);
      } else if (r.status !== 409) fail('creating the default Environment', r);
    }
    if (!envId)
      throw new Error(`no free name for the default Environment (${ENV_NAME}-2 … -50 are all taken)`);

    let envKey = saved.MANGO_ENVIRONMENT_KEY ?? '';
    const keyWorks =
      envKey &&
      saved.MANGO_ENVIRONMENT_ID === envId &&
      (await call(base, envKey, 'GET', `/v1/environments/${envId}/work/stats`)).status === 200;
    if (!keyWorks) {
      if (envKey && saved.MANGO_ENVIRONMENT_ID === envId)
        say('the saved supervisor key no longer authenticates (revoked?): issued a new one');
      else say('issued a supervisor key for the Environment');
      envKey = (
        await keys.create({ workspaceId: WORKSPACE, environmentId: envId, label: 'local-supervisor' })
      ).api_key;
    }

    const out = [
      `MANGO_BASE_URL=${base}`,
      `MANGO_API_KEY=${apiKey}`,
      `MANGO_DATABASE_URL=${url}`,
      `MANGO_ENVIRONMENT_ID=${envId}`,
      `MANGO_ENVIRONMENT_KEY=${envKey}`,
      '',
    ].join('\n');
    // Secrets: written 0600 by an explicit chmod, not through the caller's umask.
    const tmp = `${file}.tmp-${process.pid}`;
    writeFileSync(tmp, out);
    chmodSync(tmp, 0o600);
    renameSync(tmp, file);
  } finally {
    await ds.destroy();
  }
}

main(process.argv[2]!, process.argv[3]!).then(
  () => process.exit(0),
  (err: unknown) => {
    say(`could not prepare the local keys and Environment: ${(err as Error)?.message ?? String(err)}`);
    process.exit(1);
  },
);
