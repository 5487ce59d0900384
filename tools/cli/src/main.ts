import { Command, CommanderError } from 'commander';
import { DomainError } from '@mango/domain-kernel';
import { ApiKeysService } from '@mango/feature-auth';
import { createDataSource, migrate } from '@mango/persistence';
import { MangoClient } from '@mango/sdk';
import { connectSession, Connection, resolveConnection, UsageError } from './connect';

/**
 * `mango` — operator commands that talk to PostgreSQL directly (MANGO_DATABASE_URL):
 *   mango migrate
 *   mango api-key create -workspace W [-environment E] -label L   (prints the key once)
 *   mango api-key list -workspace W
 *   mango api-key revoke -id K
 * and commands that talk to the API (flags, else MANGO_BASE_URL/MANGO_API_KEY, else .mango/local.env):
 *   mango sessions connect <session_id>
 *   mango sessions create --agent A --environment E [--title T] [--message M] [--connect]
 * Single-dash long options (as documented) and the usual double-dash forms are both accepted.
 */
const LONG_OPTIONS = [
  'workspace',
  'environment',
  'label',
  'id',
  'json',
  'agent',
  'title',
  'message',
  'connect',
];

export function normalizeArgs(argv: string[]): string[] {
  return argv.map((a) => {
    const m = /^-([a-z][a-z-]+)(=.*)?$/.exec(a);
    return m && LONG_OPTIONS.includes(m[1]!) ? `--${m[1]}${m[2] ?? ''}` : a;
  });
}

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  env: Record<string, string | undefined>;
  cwd?: string;
}

const defaultIo: Io = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  env: process.env,
};

type ApiFlags = { baseUrl?: string; apiKey?: string };

async function withDatabase<T>(
  io: Io,
  fn: (ds: ReturnType<typeof createDataSource>) => Promise<T>,
): Promise<T> {
  const url = io.env.MANGO_DATABASE_URL;
  if (!url) throw new Error('MANGO_DATABASE_URL is not set');
  const ds = createDataSource({ url, poolSize: 2, applicationName: 'mango-cli' });
  await ds.initialize();
  try {
    return await fn(ds);
  } finally {
    await ds.destroy();
  }
}

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const program = new Command('mango').description('Mango operator CLI').exitOverride();
  program.configureOutput({ writeOut: io.out, writeErr: io.err });

  program
    .command('migrate')
    .description('apply pending database migrations (under an advisory lock)')
    .action(async () => {
      const applied = await withDatabase(io, migrate);
      io.out(
        applied.length
          ? `applied ${applied.length} migration(s): ${applied.join(', ')}\n`
          : 'database is up to date\n',
      );
    });

  const apiKey = program.command('api-key').description('issue, list and revoke API keys');
  apiKey
    .command('create')
    .requiredOption('--workspace <id>', 'workspace id, e.g. wrkspc_default')
    .option('--environment <id>', 'bind the key to one Environment (a supervisor key: Poll, Ack, Stats only)')
    .requiredOption('--label <label>', 'a name to tell keys apart')
    .option('--json', 'print JSON')
    .action(async (o: { workspace: string; environment?: string; label: string; json?: boolean }) => {
      const key = await withDatabase(io, (ds) =>
        new ApiKeysService(ds).create({
          workspaceId: o.workspace,
          environmentId: o.environment,
          label: o.label,
        }),
      );
      if (o.json) io.out(`${JSON.stringify(key)}\n`);
      else io.out(`id: ${key.id}\napi_key: ${key.api_key}\n(the key is shown only once)\n`);
    });
  apiKey
    .command('list')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print JSON')
    .action(async (o: { workspace: string; json?: boolean }) => {
      const keys = await withDatabase(io, (ds) => new ApiKeysService(ds).list(o.workspace));
      if (o.json) return io.out(`${JSON.stringify(keys)}\n`);
      for (const k of keys) {
        io.out(
          `${k.id}\t${k.environment_id ?? 'workspace'}\t${k.label}\t${k.key_hint}\t${k.created_at}\t${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}\n`,
        );
      }
    });
  apiKey
    .command('revoke')
    .requiredOption('--id <key_id>', 'the key id (key_…)')
    .action(async (o: { id: string }) => {
      const k = await withDatabase(io, (ds) => new ApiKeysService(ds).revoke(o.id));
      io.out(`revoked ${k.id} at ${k.revoked_at}\n`);
    });

  let exitCode = 0;
  const connection = (o: ApiFlags): Connection => resolveConnection(o, io.env, io.cwd ?? process.cwd());
  const sessions = program.command('sessions').description('work with Sessions over the API');
  sessions
    .command('connect')
    .description('attach this terminal to a Session: history, live events, messages, approvals, interrupts')
    .argument('<session_id>', 'the Session (sesn_…)')
    .option('--base-url <url>', 'the API base URL (default MANGO_BASE_URL, then .mango/local.env)')
    .option('--api-key <key>', 'a Workspace key (default MANGO_API_KEY, then .mango/local.env)')
    .action(async (sessionId: string, o: ApiFlags) => {
      exitCode = await connectSession(connection(o), sessionId);
    });
  sessions
    .command('create')
    .description('create a Session (and attach to it with --connect)')
    .requiredOption('--agent <id>', 'the Agent (agent_…)')
    .requiredOption('--environment <id>', 'the Environment (env_…)')
    .option('--title <title>', 'a title')
    .option('--message <text>', 'a first user.message (starts the Session running)')
    .option('--connect', 'attach this terminal to the new Session')
    .option('--base-url <url>', 'the API base URL')
    .option('--api-key <key>', 'a Workspace key')
    .action(
      async (
        o: ApiFlags & {
          agent: string;
          environment: string;
          title?: string;
          message?: string;
          connect?: boolean;
        },
      ) => {
        const conn = connection(o);
        // Creation is not idempotent: sent once, never retried.
        const client = new MangoClient({ baseUrl: conn.baseUrl, apiKey: conn.apiKey, maxRetries: 0 });
        const session = await client.sessions.create({
          agent: o.agent,
          environment_id: o.environment,
          ...(o.title ? { title: o.title } : {}),
          ...(o.message
            ? { initial_events: [{ type: 'user.message', content: [{ type: 'text', text: o.message }] }] }
            : {}),
        });
        io.out(`${session.id}\n`);
        if (o.connect) exitCode = await connectSession(conn, session.id);
      },
    );

  try {
    await program.parseAsync(normalizeArgs(argv), { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof UsageError) {
      io.err(`mango: ${e.message}\n`);
      return 2;
    }
    if (e instanceof DomainError) {
      io.err(`mango: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
