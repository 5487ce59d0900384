import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { keyringFromSettings } from '@mango/platform-secrets';
import { backupRefused } from './backup-error';
import { backupEnv } from './backup-settings';
import { runBackup } from './backup';
import { identitiesFromFile, newIdentity, OpenWith, SealWith } from './encryption';
import { runRestore } from './restore';
import { summaryText } from './summary-text';

export interface BackupIo {
  out: (s: string) => void;
  err: (s: string) => void;
  env: Record<string, string | undefined>;
}

const collect = (value: string, previous: string[]) => [...previous, value];

async function secretFile(path: string, what: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).replace(/\r?\n$/, '');
  } catch (e) {
    throw backupRefused(`${what} ${path} cannot be read: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

/** The passphrase: --passphrase-file (its first line), else MANGO_BACKUP_PASSPHRASE; never an argument. */
async function passphraseOf(
  o: { passphraseFile?: string },
  env: BackupIo['env'],
): Promise<string | undefined> {
  if (o.passphraseFile) return (await secretFile(o.passphraseFile, 'the passphrase file')).split(/\r?\n/)[0];
  return env.MANGO_BACKUP_PASSPHRASE || undefined;
}

/**
 * `mango backup --out FILE (--recipient age1… … | --passphrase-file FILE | MANGO_BACKUP_PASSPHRASE)`,
 * `mango backup new-identity --file FILE` and
 * `mango restore --in FILE (--identity FILE | --passphrase-file FILE | MANGO_BACKUP_PASSPHRASE)
 *   [--keyring-out FILE] [--verify-only]` (docs/operations.md, "Backup and restore").
 */
export function registerBackupCommands(program: Command, io: BackupIo): void {
  const backup = program
    .command('backup')
    .description(
      'write one age-encrypted archive of the database (pg_dump), every object of the bucket and the keyring',
    )
    .option('--out <file>', 'the archive to write (never overwritten)')
    .option('--recipient <age1…>', 'an age X25519 recipient to encrypt to (repeatable)', collect, [])
    .option('--passphrase-file <file>', 'encrypt with the passphrase on the first line of this file (scrypt)')
    .option('--json', 'print the summary as JSON')
    .action(async (o: { out?: string; recipient: string[]; passphraseFile?: string; json?: boolean }) => {
      if (!o.out) throw backupRefused('--out FILE is required');
      const passphrase = o.recipient.length ? undefined : await passphraseOf(o, io.env);
      if (o.recipient.length && o.passphraseFile)
        throw backupRefused('give --recipient or a passphrase, not both (age encrypts to one or the other)');
      const seal: SealWith = o.recipient.length
        ? { recipients: o.recipient }
        : passphrase !== undefined
          ? { passphrase }
          : (() => {
              throw backupRefused(
                'give --recipient age1… (see mango backup new-identity) or a passphrase (--passphrase-file, MANGO_BACKUP_PASSPHRASE)',
              );
            })();
      let keyring;
      try {
        keyring = keyringFromSettings(io.env);
      } catch (e) {
        throw backupRefused((e as Error).message);
      }
      if (!keyring) io.err('mango: no keyring is configured (MANGO_KEYRING…): the archive holds none\n');
      const summary = await runBackup({
        out: o.out,
        seal,
        env: backupEnv(io.env),
        keyring,
        processEnv: io.env,
        progress: (line) => io.err(line),
      });
      io.out(o.json ? `${JSON.stringify(summary)}\n` : summaryText('backup', summary));
    });
  backup
    .command('new-identity')
    .description('write a new age X25519 identity file (mode 0600) and print its recipient (age1…)')
    .requiredOption('--file <file>', 'the identity file to write (never overwritten)')
    .action(async (o: { file: string }) => {
      const { identity, recipient } = await newIdentity();
      try {
        await writeFile(
          o.file,
          `# created: ${new Date().toISOString()}\n# public key: ${recipient}\n${identity}\n`,
          {
            flag: 'wx',
            mode: 0o600,
          },
        );
      } catch (e) {
        throw backupRefused(`cannot write ${o.file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
      }
      io.out(`${recipient}\n`);
    });

  program
    .command('restore')
    .description(
      'verify an archive of mango backup, then restore it into an EMPTY database and an EMPTY bucket ' +
        '(Temporal is not restored: running Sessions restart from their logs)',
    )
    .option('--in <file>', 'the archive')
    .option('--identity <file>', 'an age identity file (AGE-SECRET-KEY-1…)', collect, [])
    .option('--passphrase-file <file>', 'the passphrase, on the first line of this file')
    .option('--keyring-out <file>', "write the archive's keyring here (a MANGO_KEYRING_FILE, mode 0600)")
    .option('--verify-only', 'decrypt and check the whole archive; restore nothing')
    .option('--json', 'print the summary as JSON')
    .action(
      async (o: {
        in?: string;
        identity: string[];
        passphraseFile?: string;
        keyringOut?: string;
        verifyOnly?: boolean;
        json?: boolean;
      }) => {
        if (!o.in) throw backupRefused('--in FILE is required');
        const open: OpenWith = { identities: [], passphrases: [] };
        for (const file of o.identity)
          open.identities.push(...identitiesFromFile(await secretFile(file, 'the identity file')));
        const passphrase = await passphraseOf(o, io.env);
        if (passphrase !== undefined) open.passphrases.push(passphrase);
        const summary = await runRestore({
          in: o.in,
          open,
          keyringOut: o.keyringOut,
          verifyOnly: o.verifyOnly,
          env: o.verifyOnly ? undefined : backupEnv(io.env),
          processEnv: io.env,
          progress: (line) => io.err(line),
        });
        io.out(
          o.json ? `${JSON.stringify(summary)}\n` : summaryText(o.verifyOnly ? 'verify' : 'restore', summary),
        );
      },
    );
}
