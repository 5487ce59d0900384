import type { SchemaStatus } from '@mango/persistence';

/** `mango migrate status` for a terminal: one line per fact, then the verdict. */
export function schemaStatusText(
  status: SchemaStatus,
  verdict: { ok: true; newerCompatible: string[] } | { ok: false; reason: string },
): string {
  const lines = [
    `schema level: database requires ${status.requiredLevel ?? 'none (table not yet created)'}, this build understands ${status.codeLevel}`,
    `applied: ${status.applied.length} migration(s)${status.applied.length ? `, the last ${status.applied[status.applied.length - 1]!.name}` : ''}`,
    `pending: ${status.pending.length ? status.pending.join(', ') : 'none'}`,
    `applied by a newer release: ${status.unknown.length ? status.unknown.join(', ') : 'none'}`,
    verdict.ok
      ? `this build can serve on this database${verdict.newerCompatible.length ? ' (a newer release expanded it: finish the upgrade)' : ''}`
      : `this build would refuse to start: ${verdict.reason}`,
  ];
  return `${lines.join('\n')}\n`;
}
