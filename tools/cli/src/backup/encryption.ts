import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import * as age from 'age-encryption';
import { backupRefused } from './backup-error';

/**
 * The archive's encryption: age (https://age-encryption.org/v1) through `age-encryption`, the TypeScript
 * implementation by age's author. Either X25519 recipients (`age1…`; decrypted with their identity files,
 * `AGE-SECRET-KEY-1…`) or one passphrase (scrypt) — age does not mix them in one file. Streamed: the
 * payload is ChaCha20-Poly1305 in 64 KiB chunks, each authenticated, the last one marked, so a tampered or
 * truncated archive fails to decrypt where it was changed or cut.
 */
export type SealWith = { recipients: string[] } | { passphrase: string; scryptLogN?: number };

export interface OpenWith {
  identities: string[];
  passphrases: string[];
}

/** Shortest passphrase `mango backup` accepts (age's scrypt slows guessing; it does not make a word safe). */
export const MIN_PASSPHRASE_LENGTH = 12;

export function encrypter(seal: SealWith): age.Encrypter {
  const e = new age.Encrypter();
  if ('recipients' in seal) {
    if (!seal.recipients.length) throw backupRefused('give at least one --recipient (age1…) or a passphrase');
    for (const r of seal.recipients) {
      if (!/^age1[02-9ac-hj-np-z]{58}$/.test(r))
        throw backupRefused(
          `--recipient must be an age X25519 recipient (age1… , 62 characters): ${r.slice(0, 80)}`,
        );
      try {
        e.addRecipient(r);
      } catch {
        throw backupRefused(`--recipient ${r.slice(0, 80)} is not a valid age recipient`);
      }
    }
  } else {
    if (seal.passphrase.length < MIN_PASSPHRASE_LENGTH)
      throw backupRefused(`the passphrase must be at least ${MIN_PASSPHRASE_LENGTH} characters`);
    e.setPassphrase(seal.passphrase);
    if (seal.scryptLogN !== undefined) e.setScryptWorkFactor(seal.scryptLogN);
  }
  return e;
}

/** The age ciphertext of `plain`, as a Node stream (pulled: nothing is read ahead of the consumer). */
export async function encryptStream(plain: Readable, seal: SealWith): Promise<Readable> {
  const web = Readable.toWeb(plain) as unknown as ReadableStream<Uint8Array>;
  const out = await encrypter(seal).encrypt(web);
  return Readable.fromWeb(out as unknown as WebReadableStream<Uint8Array>);
}

/** The identities in an age identity file: `AGE-SECRET-KEY-1…` lines; `#` comments and blank lines skipped. */
export function identitiesFromFile(text: string): string[] {
  const ids = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  if (!ids.length) throw backupRefused('the identity file holds no identity (AGE-SECRET-KEY-1…)');
  for (const [i, id] of ids.entries())
    if (!/^AGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}$/.test(id))
      throw backupRefused(
        `line ${i + 1} of the identity file is not an age X25519 identity (AGE-SECRET-KEY-1…)`,
      );
  return ids;
}

/**
 * The plaintext of an age stream. Resolves once the header opened with one of the identities or
 * passphrases (else it refuses, naming neither); a damaged or truncated payload fails while it is read.
 */
export async function decryptStream(cipher: Readable, open: OpenWith): Promise<Readable> {
  if (!open.identities.length && !open.passphrases.length)
    throw backupRefused('give --identity FILE or a passphrase (--passphrase-file, MANGO_BACKUP_PASSPHRASE)');
  const d = new age.Decrypter();
  for (const id of open.identities) d.addIdentity(id);
  for (const p of open.passphrases) d.addPassphrase(p);
  let plain: ReadableStream<Uint8Array>;
  try {
    plain = await d.decrypt(Readable.toWeb(cipher) as unknown as ReadableStream<Uint8Array>);
  } catch (e) {
    throw describeAgeFailure(e);
  }
  const out = Readable.fromWeb(plain as unknown as WebReadableStream<Uint8Array>);
  return out;
}

/** An age error as the operator's message (age's own words kept: they say which check failed). */
export function describeAgeFailure(e: unknown): Error {
  const why = (e as Error)?.message ?? String(e);
  if (/no identity matched/i.test(why))
    return backupRefused(
      'the archive does not open with the given identity or passphrase (no identity matched any of its recipients); nothing was restored',
    );
  if (/invalid header HMAC/i.test(why))
    return backupRefused(
      'the archive header was tampered with (age: invalid header HMAC); nothing was restored',
    );
  if (/scrypt work factor is too high/i.test(why))
    return backupRefused('the archive asks for an scrypt work factor above 2^20; refused');
  return backupRefused(
    `the archive is not a valid age file, or is damaged, truncated or tampered with (age: ${why.slice(0, 200)})`,
  );
}

/** A fresh X25519 identity (the identity file's text) and its recipient. */
export async function newIdentity(): Promise<{ identity: string; recipient: string }> {
  const identity = await age.generateX25519Identity();
  return { identity, recipient: await age.identityToRecipient(identity) };
}
