import { Command, CommanderError } from 'commander';
import { DomainError, ErrorCode } from '@mango/domain-kernel';
import { ApiKeysService } from '@mango/feature-auth';
import { rotateVaultKeys, vaultKeyringFrom } from '@mango/feature-vaults';
import {
  checkSchema,
  createDataSource,
  migrate,
  resealStoredSecrets,
  schemaStatus,
  sealedKeyUsage,
} from '@mango/persistence';
import { generateKeyringEntry, Keyring, keyringFromSettings, KeyringError } from '@mango/platform-secrets';
import { MangoClient } from '@mango/sdk';
import { registerBackupCommands } from './backup/commands';
import { connectSession, Connection, resolveConnection, UsageError } from './connect';
import { rotateText, statusReport, statusText } from './keyring-report';
import { schemaStatusText } from './schema-status-text';
import { cliVersion } from './version';
import { addressOf, listenForWebhooks } from './webhook-listen';

/**
 * `mango` — operator commands that talk to PostgreSQL directly (MANGO_DATABASE_URL):
 *   mango migrate
 *   mango migrate status [--json]          (applied/pending/newer migrations, schema level; exit 1 if refused)
 *   mango api-key create -workspace W [-environment E] -label L   (prints the key once)
 *   mango api-key list -workspace W
 *   mango api-key revoke -id K
 * and commands that talk to the API (flags, else MANGO_BASE_URL/MANGO_API_KEY, else .mango/local.env):
 *   mango sessions connect <session_id>
 *   mango sessions create --agent A --environment E [--title T] [--message M] [--connect]
 *   mango webhook create -url U -events session.created,session.status_idled [-description D]
 *                                                                   (prints the signing secret once)
 *   mango webhook list
 *   mango webhook delete -id W
 *   mango webhook listen -port P -secret whsec_… [-count N]          (verifies and prints deliveries)
 *   mango keyring status [--json]          (what each key id still seals; exit 1 if a key in use is missing)
 *   mango keyring rotate [--batch-size N]  (re-seal everything under the active key; exit 1 while any is left)
 *   mango keyring new-key --id ID          (prints a fresh `id:base64key` entry)
 *   mango vault rotate-key                 (older, Vault credentials only; reads MANGO_VAULT_KEYRING)
 *   mango backup --out F … | mango restore --in F …   (encrypted archive: database, objects, keyring)
 * The keyring commands read MANGO_KEYRING or MANGO_KEYRING_FILE (and the older MANGO_VAULT_KEYRING and
 * MANGO_WEBHOOK_SECRETS_KEY) as the apps do (docs/operator-guide.md, Keyring).
 *   mango --version                        (the release version, docs/versioning.md)
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
  'url',
  'events',
  'description',
  'port',
  'host',
  'secret',
  'count',
  'batch-size',
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

/** A call to the HTTP API with the Workspace key; an error envelope becomes a DomainError-style exit 1. */
async function callApi(
  io: Io,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  // MANGO_API_URL (the API's own port) or, like `sessions connect`, MANGO_BASE_URL then .mango/local.env.
  const conn = io.env.MANGO_API_URL
    ? { baseUrl: io.env.MANGO_API_URL, apiKey: io.env.MANGO_API_KEY ?? '' }
    : resolveConnection({}, io.env, io.cwd ?? process.cwd());
  const base = conn.baseUrl.replace(/\/$/, '');
  const key = conn.apiKey;
  if (!key) throw new Error('MANGO_API_KEY is not set (a Workspace API key)');
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (!res.ok) {
    const error = (json.error ?? {}) as { type?: string; message?: string };
    throw new ApiCallError(`${res.status} ${error.type ?? 'error'}: ${error.message ?? res.statusText}`);
  }
  return json;
}

class ApiCallError extends Error {}

const collect = (value: string, previous: string[]) => [...previous, value];

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const program = new Command('mango')
    .description('Mango operator CLI')
    .version(cliVersion(), '-V, --version', 'print the version')
    .exitOverride();
  program.configureOutput({ writeOut: io.out, writeErr: io.err });

  const migrateCommand = program
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
  migrateCommand
    .command('status')
    .description(
      'show applied, pending and newer-release migrations and the schema level; exits 1 when this build ' +
        'would refuse to start on the database (pending migrations, or a schema contracted past it)',
    )
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const status = await withDatabase(io, schemaStatus);
      let verdict: { ok: true; newerCompatible: string[] } | { ok: false; reason: string };
      try {
        verdict = { ok: true, ...checkSchema(status) };
      } catch (e) {
        verdict = { ok: false, reason: (e as Error).message };
      }
      io.out(o.json ? `${JSON.stringify({ ...status, ...verdict })}\n` : schemaStatusText(status, verdict));
      if (!verdict.ok) throw new DomainError(ErrorCode.Conflict, verdict.reason);
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
  const webhook = program
    .command('webhook')
    .description('register, list and delete webhook endpoints (through the HTTP API)');
  webhook
    .command('create')
    .requiredOption('--url <url>', 'the endpoint URL')
    .requiredOption(
      '--events <types>',
      'comma-separated event types, e.g. session.created,session.status_idled',
    )
    .option('--description <text>', 'a description')
    .option('--json', 'print JSON')
    .action(async (o: { url: string; events: string; description?: string; json?: boolean }) => {
      const created = await callApi(io, 'POST', '/v1/webhooks', {
        url: o.url,
        event_types: o.events
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean),
        ...(o.description !== undefined ? { description: o.description } : {}),
      });
      if (o.json) io.out(`${JSON.stringify(created)}\n`);
      else
        io.out(
          `id: ${String(created.id)}\nurl: ${String(created.url)}\nsecret: ${String(created.secret)}\n(the secret is shown only once)\n`,
        );
    });
  webhook
    .command('list')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const rows: Array<Record<string, unknown>> = [];
      let page: string | null = null;
      do {
        const res = await callApi(
          io,
          'GET',
          `/v1/webhooks?limit=100${page ? `&page=${encodeURIComponent(page)}` : ''}`,
        );
        rows.push(...(res.data as Array<Record<string, unknown>>));
        page = res.next_page as string | null;
      } while (page);
      if (o.json) return io.out(`${JSON.stringify(rows)}\n`);
      for (const w of rows)
        io.out(
          `${String(w.id)}\t${String(w.url)}\t${(w.event_types as string[]).join(',')}\t${w.disabled ? 'disabled' : 'enabled'}\n`,
        );
    });
  webhook
    .command('delete')
    .requiredOption('--id <webhook_id>', 'the endpoint id (webhook_…)')
    .action(async (o: { id: string }) => {
      const res = await callApi(io, 'DELETE', `/v1/webhooks/${encodeURIComponent(o.id)}`);
      io.out(`deleted ${String(res.id)}\n`);
    });

  webhook
    .command('listen')
    .description(
      'receive webhooks on this machine: verify each delivery (Standard Webhooks signature) and print ' +
        '"<type> <id> <webhook-id>"; a delivery that does not verify gets 400 and a line on stderr',
    )
    .requiredOption('--port <n>', 'port to listen on')
    .option('--host <address>', 'address to bind', '127.0.0.1')
    .option('--secret <whsec>', 'signing secret (repeat during a rotation overlap)', collect, [])
    .option('--count <n>', 'exit after this many verified deliveries')
    .option('--json', 'print each verified event as JSON')
    .action(async (o: { port: string; host: string; secret: string[]; count?: string; json?: boolean }) => {
      const secrets = o.secret.length
        ? o.secret
        : io.env.MANGO_WEBHOOK_SECRET
          ? [io.env.MANGO_WEBHOOK_SECRET]
          : [];
      if (!secrets.length)
        throw new DomainError(
          ErrorCode.InvalidRequest,
          'a signing secret is required (--secret or MANGO_WEBHOOK_SECRET)',
        );
      const port = Number(o.port);
      const count = o.count === undefined ? undefined : Number(o.count);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new DomainError(ErrorCode.InvalidRequest, `--port must be 0–65535, got ${o.port}`);
      if (count !== undefined && (!Number.isInteger(count) || count < 1))
        throw new DomainError(ErrorCode.InvalidRequest, `--count must be a positive integer, got ${o.count}`);
      let listening;
      try {
        listening = await listenForWebhooks({
          host: o.host,
          port,
          secrets,
          json: o.json,
          count,
          onDelivery: (line) => io.out(`${line}\n`),
          onRejected: (line) => io.err(`${line}\n`),
        });
      } catch (e) {
        throw new DomainError(
          ErrorCode.InvalidRequest,
          `cannot listen on ${o.host}:${o.port}: ${(e as Error).message}`,
        );
      }
      io.err(`listening on ${addressOf(listening.server)}\n`);
      const stop = () => listening.server.close();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      await Promise.race([listening.done, new Promise((r) => listening.server.once('close', r))]);
      listening.server.close();
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    });

  const keyringOf = (): Keyring | null => {
    try {
      return keyringFromSettings(io.env);
    } catch (e) {
      throw new DomainError(ErrorCode.InvalidRequest, (e as Error).message);
    }
  };
  const keyring = program.command('keyring').description('the keyring that seals secrets at rest');
  keyring
    .command('status')
    .description(
      'show, per key id, how many Vault credentials and webhook signing secrets it still seals; ' +
        'exits 1 when a key some stored value needs is not in the keyring',
    )
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const ring = keyringOf();
      const report = statusReport(ring, await withDatabase(io, (ds) => sealedKeyUsage(ds)));
      io.out(o.json ? `${JSON.stringify(report)}\n` : statusText(report));
      if (report.missing_key_ids.length)
        throw new DomainError(
          ErrorCode.Conflict,
          `the keyring lacks key(s) ${report.missing_key_ids.join(', ')} that stored values need`,
        );
    });
  keyring
    .command('rotate')
    .description(
      're-seal every stored secret under the active (first) key, in batches, while the apps run; keep the ' +
        'older keys in the keyring until this reports 0 remaining',
    )
    .option('--batch-size <n>', 'rows per batch', (v) => Number(v), 100)
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean; batchSize: number }) => {
      if (!Number.isInteger(o.batchSize) || o.batchSize < 1 || o.batchSize > 10_000)
        throw new DomainError(ErrorCode.InvalidRequest, '--batch-size must be 1–10000');
      const ring = keyringOf();
      if (!ring) throw new DomainError(ErrorCode.InvalidRequest, 'no keyring is configured (MANGO_KEYRING)');
      const r = await withDatabase(io, (ds) =>
        resealStoredSecrets(ds, ring, {
          batchSize: o.batchSize,
          onBatch: (p) =>
            o.json ? undefined : io.err(`${p.store}: re-sealed ${p.resealed}, skipped ${p.skipped}\n`),
        }),
      ).catch((e: Error) => {
        throw e instanceof KeyringError ? new DomainError(ErrorCode.InvalidRequest, e.message) : e;
      });
      io.out(o.json ? `${JSON.stringify(r)}\n` : rotateText(r));
      const remaining = r.remaining.reduce((n, u) => n + u.count, 0);
      if (r.unreadable.length)
        throw new DomainError(
          ErrorCode.Conflict,
          `${r.unreadable.length} row(s) hold sealed values that do not open (sealed for another row, or ` +
            `tampered): ${r.unreadable.join(', ')}; archive them or replace their secrets`,
        );
      if (remaining > 0)
        throw new DomainError(ErrorCode.Conflict, `${remaining} value(s) still use other keys: run again`);
    });
  keyring
    .command('new-key')
    .description('print a fresh keyring entry (id:base64 of 32 random bytes) to put first in MANGO_KEYRING')
    .requiredOption('--id <id>', 'the key id, 1-64 of [A-Za-z0-9_.-], e.g. k2027a')
    .action((o: { id: string }) => {
      try {
        io.out(`${generateKeyringEntry(o.id)}\n`);
      } catch (e) {
        throw new DomainError(ErrorCode.InvalidRequest, (e as Error).message);
      }
    });

  const vault = program
    .command('vault')
    .description('Vault credential encryption (older; see mango keyring)');
  vault
    .command('rotate-key')
    .description(
      're-wrap every credential data key under the first (active) key of MANGO_VAULT_KEYRING; keep the old ' +
        'keys in the keyring until this reports 0 remaining',
    )
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      let keyring;
      try {
        keyring = vaultKeyringFrom(io.env.MANGO_VAULT_KEYRING);
      } catch (e) {
        throw new DomainError(ErrorCode.InvalidRequest, (e as Error).message);
      }
      if (!keyring) throw new DomainError(ErrorCode.InvalidRequest, 'MANGO_VAULT_KEYRING is not set');
      const r = await withDatabase(io, (ds) => rotateVaultKeys(ds, keyring)).catch((e: Error) => {
        // A key the keyring lacks (or data that does not authenticate): say which, change nothing more.
        throw e.name === 'KeyringError' ? new DomainError(ErrorCode.InvalidRequest, e.message) : e;
      });
      if (o.json) io.out(`${JSON.stringify(r)}\n`);
      else
        io.out(
          `re-wrapped ${r.rewrapped} credential key(s) under ${r.activeKeyId}; ${r.remaining} remaining under other keys\n`,
        );
      if (r.remaining > 0)
        throw new DomainError(
          ErrorCode.Conflict,
          `${r.remaining} credential(s) still use old keys: run again`,
        );
    });

  registerBackupCommands(program, io); // mango backup | restore (docs/operations.md, "Backup and restore")

  try {
    await program.parseAsync(normalizeArgs(argv), { from: 'user' });
    return exitCode;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof UsageError) {
      io.err(`mango: ${e.message}\n`);
      return 2;
    }
    if (e instanceof DomainError || e instanceof ApiCallError) {
      io.err(`mango: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
