import type { ResealResult } from '@mango/persistence';
import type { Keyring, KeyUsage } from '@mango/platform-secrets';

const NOUN: Record<string, string> = {
  vault_credentials: 'Vault credential(s)',
  webhook_secrets: 'webhook signing secret(s)',
};

/** `mango keyring status`: the keyring's ids and, per key id, what it still seals (never key material). */
export function statusReport(keyring: Keyring | null, usage: readonly KeyUsage[]) {
  const keys = keyring?.ids() ?? [];
  const inUse = [...new Set(usage.map((u) => u.keyId))];
  return {
    active_key_id: keyring?.activeId ?? null,
    keys: keys.map((id) => ({
      id,
      active: id === keyring?.activeId,
      seals: usage.filter((u) => u.keyId === id).map(({ store, count, bound }) => ({ store, count, bound })),
    })),
    missing_key_ids: inUse.filter((id) => !keyring?.has(id)),
    /** Values not yet under the active key, or not yet bound to their record: what `rotate` would re-seal. */
    to_reseal: usage
      .filter((u) => u.keyId !== keyring?.activeId || !u.bound)
      .reduce((n, u) => n + u.count, 0),
    usage: usage.map(({ store, keyId, count, bound }) => ({ store, key_id: keyId, count, bound })),
  };
}

export function statusText(r: ReturnType<typeof statusReport>): string {
  const lines = [`active key: ${r.active_key_id ?? '(no keyring configured)'}`];
  for (const k of r.keys)
    lines.push(
      `key ${k.id}${k.active ? ' (active)' : ''}: ${
        k.seals.length
          ? k.seals
              .map(
                (s) => `${s.count} ${NOUN[s.store] ?? s.store}${s.bound ? '' : ' (unbound, older format)'}`,
              )
              .join(', ')
          : 'seals nothing'
      }`,
    );
  for (const id of r.missing_key_ids) {
    const seals = r.usage.filter((u) => u.key_id === id);
    lines.push(
      `MISSING key ${id}: ${seals.map((s) => `${s.count} ${NOUN[s.store] ?? s.store}`).join(', ')} cannot be opened`,
    );
  }
  lines.push(`${r.to_reseal} value(s) to re-seal under the active key (mango keyring rotate)`);
  return `${lines.join('\n')}\n`;
}

export function rotateText(r: ResealResult): string {
  const remaining = r.remaining.reduce((n, u) => n + u.count, 0);
  return (
    `re-sealed ${r.resealed.vault_credentials} Vault credential(s) and ${r.resealed.webhook_secrets} webhook ` +
    `signing secret(s) under ${r.activeKeyId}; ${r.skipped} row(s) changed meanwhile (run again); ` +
    `${r.unreadable.length} unreadable${r.unreadable.length ? ` (${r.unreadable.join(', ')})` : ''}; ` +
    `${remaining} remaining under other keys\n`
  );
}
