import { Command, CommanderError } from 'commander';
import { DomainError, ErrorCode } from '@mango/domain-kernel';
import { ApiKeysService } from '@mango/feature-auth';
import { rotateVaultKeys, vaultKeyringFrom } from '@mango/feature-vaults';
import { createDataSource, migrate } from '@mango/persistence';

/**
 * `mango` — operator commands that talk to PostgreSQL directly (MANGO_DATABASE_URL):
 *   mango migrate
 *   mango api-key create -workspace W [-environment E] -label L   (prints the key once)
 *   mango api-key list -workspace W
 *   mango api-key revoke -id K
 *   mango vault rotate-key                                          (reads MANGO_VAULT_KEYRING)
 * Single-dash long options (as documented) and the usual double-dash forms are both accepted.
 */
const LONG_OPTIONS = ['workspace', 'environment', 'label', 'id', 'json'];

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
}

const defaultIo: Io = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  env: process.env,
};

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

  const vault = program.command('vault').description('Vault credential encryption');
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

  try {
    await program.parseAsync(normalizeArgs(argv), { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof DomainError) {
      io.err(`mango: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
