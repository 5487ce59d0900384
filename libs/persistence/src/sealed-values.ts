import {
  assertKeyringCovers,
  isCurrent,
  Keyring,
  KeyringError,
  KeyUsage,
  LEGACY_WEBHOOK_KEY_ID,
  rewrap,
  resealStored,
  vaultCredentialBinding,
  webhookSecretBinding,
} from '@mango/platform-secrets';
import type { DataSource, EntityManager } from 'typeorm';
import type { StoredWebhookSecret } from './entities';

type Queryable = Pick<DataSource | EntityManager, 'query'>;

/**
 * Every value sealed at rest, by store and key id: Vault credentials (`vault_credentials.kek_id`) and
 * webhook signing secrets (`webhooks.secrets[*].kek_id`; those sealed before key ids count under
 * `webhook-legacy`, unbound). Read by the boot check and `mango keyring status`.
 */
export async function sealedKeyUsage(db: Queryable): Promise<KeyUsage[]> {
  const vault: Array<{ key_id: string; n: number }> = await db.query(
    `SELECT kek_id AS key_id, count(*)::int AS n FROM vault_credentials
      WHERE kek_id IS NOT NULL GROUP BY kek_id ORDER BY kek_id`,
  );
  const webhook: Array<{ key_id: string; bound: boolean; n: number }> = await db.query(
    `SELECT coalesce(s->>'kek_id', $1) AS key_id, (s ? 'kek_id') AS bound, count(*)::int AS n
       FROM webhooks w CROSS JOIN LATERAL jsonb_array_elements(w.secrets) s
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [LEGACY_WEBHOOK_KEY_ID],
  );
  return [
    ...vault.map((r) => ({ store: 'vault_credentials', keyId: r.key_id, count: r.n, bound: true })),
    ...webhook.map((r) => ({ store: 'webhook_secrets', keyId: r.key_id, count: r.n, bound: r.bound })),
  ];
}

export interface ResealProgress {
  store: 'vault_credentials' | 'webhook_secrets';
  /** Values now sealed under the active key in this batch. */
  resealed: number;
  /** Rows another process changed between read and write (they are looked at again by the next run). */
  skipped: number;
}

export interface ResealResult {
  activeKeyId: string;
  resealed: { vault_credentials: number; webhook_secrets: number };
  /** Rows changed by another process meanwhile (left for the next run). */
  skipped: number;
  /** Rows whose sealed value does not open (copied from another row, or tampered): ids only. */
  unreadable: string[];
  /** What is still not under the active key (or still unbound) after the run. */
  remaining: KeyUsage[];
}

/**
 * Re-seals every stored value under the keyring's active key (`mango keyring rotate`): Vault credentials
 * get their data key re-wrapped; webhook signing secrets too, and those sealed before key ids are sealed
 * afresh, bound to their webhook. Batches of `batchSize` rows in id order; each row is written with an
 * optimistic update (only if its sealed value is still the one read), so the apps keep running and a
 * concurrent change (a credential update, an OAuth refresh, a secret rotation) wins — its row is counted as
 * skipped. Nothing is held across batches: an interrupted run is resumed by running it again.
 *
 * A key some row needs that the keyring lacks stops it before anything is written (KeyringError).
 */
export async function resealStoredSecrets(
  ds: DataSource,
  keyring: Keyring,
  opts: { batchSize?: number; onBatch?: (p: ResealProgress) => void } = {},
): Promise<ResealResult> {
  const batch = opts.batchSize ?? 100;
  const missing = (await sealedKeyUsage(ds)).filter((u) => !keyring.has(u.keyId));
  if (missing.length)
    throw new KeyringError(
      `stored values are sealed under key(s) ${[...new Set(missing.map((u) => u.keyId))].join(', ')}, ` +
        'which the keyring lacks: add them (as older keys) and run again',
    );
  const result: ResealResult = {
    activeKeyId: keyring.activeId,
    resealed: { vault_credentials: 0, webhook_secrets: 0 },
    skipped: 0,
    unreadable: [],
    remaining: [],
  };
  const report = (p: ResealProgress) => {
    result.resealed[p.store] += p.resealed;
    result.skipped += p.skipped;
    opts.onBatch?.(p);
  };

  for (let after = ''; ;) {
    const rows: Array<{ id: string; kek_id: string; wrapped_key: Buffer; secret_ciphertext: Buffer }> =
      await ds.query(
        `SELECT id, kek_id, wrapped_key, secret_ciphertext FROM vault_credentials
          WHERE kek_id IS NOT NULL AND kek_id <> $1 AND id > $2 ORDER BY id LIMIT $3`,
        [keyring.activeId, after, batch],
      );
    const p: ResealProgress = { store: 'vault_credentials', resealed: 0, skipped: 0 };
    for (const r of rows) {
      let next;
      try {
        next = rewrap(
          keyring,
          { kekId: r.kek_id, wrappedKey: r.wrapped_key, ciphertext: r.secret_ciphertext },
          vaultCredentialBinding(r.id),
        );
      } catch (e) {
        if (!(e instanceof KeyringError)) throw e;
        result.unreadable.push(r.id);
        continue;
      }
      const [, n] = (await ds.query(
        `UPDATE vault_credentials SET kek_id = $2, wrapped_key = $3
          WHERE id = $1 AND kek_id = $4 AND wrapped_key = $5`,
        [r.id, next.kekId, next.wrappedKey, r.kek_id, r.wrapped_key],
      )) as [unknown, number];
      if (n === 1) p.resealed++;
      else p.skipped++;
    }
    if (rows.length) report(p);
    if (rows.length < batch) break;
    after = rows[rows.length - 1]!.id;
  }

  for (let after = ''; ;) {
    const rows: Array<{ id: string; secrets: StoredWebhookSecret[] }> = await ds.query(
      `SELECT id, secrets FROM webhooks w
        WHERE id > $2 AND EXISTS (SELECT 1 FROM jsonb_array_elements(w.secrets) s
                                   WHERE s->>'kek_id' IS DISTINCT FROM $1)
        ORDER BY id LIMIT $3`,
      [keyring.activeId, after, batch],
    );
    const p: ResealProgress = { store: 'webhook_secrets', resealed: 0, skipped: 0 };
    for (const r of rows) {
      let next: StoredWebhookSecret[];
      let changed = 0;
      try {
        next = r.secrets.map((s) => {
          if (isCurrent(keyring, s)) return s;
          changed++;
          const { expires_at, ...sealed } = s;
          return {
            ...resealStored(keyring, sealed, webhookSecretBinding(r.id), LEGACY_WEBHOOK_KEY_ID),
            expires_at,
          };
        });
      } catch (e) {
        if (!(e instanceof KeyringError)) throw e;
        result.unreadable.push(r.id);
        continue;
      }
      const [, n] = (await ds.query(
        'UPDATE webhooks SET secrets = $2::jsonb WHERE id = $1 AND secrets = $3::jsonb',
        [r.id, JSON.stringify(next), JSON.stringify(r.secrets)],
      )) as [unknown, number];
      if (n === 1) p.resealed += changed;
      else p.skipped++;
    }
    if (rows.length) report(p);
    if (rows.length < batch) break;
    after = rows[rows.length - 1]!.id;
  }

  result.remaining = (await sealedKeyUsage(ds)).filter((u) => u.keyId !== keyring.activeId || !u.bound);
  return result;
}

/**
 * The boot check of every process that opens sealed values (apps/api, apps/orchestrator): refuses to start
 * when stored values need a key the keyring lacks. The message names key ids and counts only.
 */
export async function assertKeyringCoversStoredValues(db: Queryable, keyring: Keyring | null): Promise<void> {
  assertKeyringCovers(await sealedKeyUsage(db), keyring);
}
