import type { BackupSummary } from './backup';
import type { RestoreSummary } from './restore';

/** The human summary of `mango backup` / `mango restore` (counts, sizes, steps; never key material). */
export function summaryText(
  kind: 'backup' | 'restore' | 'verify',
  s: BackupSummary | RestoreSummary,
): string {
  const c = s.counts;
  const lines = [
    kind === 'backup'
      ? `wrote ${(s as BackupSummary).file} (${(s as BackupSummary).archive_bytes} bytes)`
      : kind === 'verify'
        ? `the archive verifies (taken ${(s as RestoreSummary).created_at})`
        : `restored the backup taken ${(s as RestoreSummary).created_at}`,
    `database dump: ${c.dump_bytes} bytes in ${c.dump_parts} part(s)`,
    `objects: ${c.objects} (${c.object_bytes} bytes)${s.vanished ? `; ${s.vanished} deleted while the backup ran, not in it` : ''}`,
    `keyring: ${c.keyring_keys} key(s)`,
    `schema: level ${s.schema.required_level ?? '-'}, ${s.schema.migrations.length} migration(s)`,
  ];
  if (kind !== 'backup') {
    const r = s as RestoreSummary;
    if (r.keyring_written)
      lines.push(`keyring written to ${r.keyring_written} (set MANGO_KEYRING_FILE to it)`);
    else if (kind === 'restore' && r.keyring_key_ids.length)
      lines.push(
        `the archive's keyring (${r.keyring_key_ids.join(', ')}) was not written: pass --keyring-out FILE`,
      );
    if (r.pending_migrations.length)
      lines.push(
        `${r.pending_migrations.length} migration(s) of this build are not in the backup: run mango migrate`,
      );
  }
  for (const step of s.steps) lines.push(`  ${step.step}: ${step.ms} ms`);
  return `${lines.join('\n')}\n`;
}
