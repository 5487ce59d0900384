/**
 * RFC 3339 with milliseconds, UTC — the only timestamp format on the wire. (Time itself is passed to
 * domain code as an argument, `now`, never read from a global, so the same code runs in workflows.)
 */
export const toWireTime = (d: Date): string => d.toISOString();
export const toWireTimeOrNull = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);
