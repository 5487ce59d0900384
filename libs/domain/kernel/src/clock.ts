/** Time is an argument to domain code, never read from a global, so the same code runs in workflows. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** RFC 3339 with milliseconds, UTC — the only timestamp format on the wire. */
export const toWireTime = (d: Date): string => d.toISOString();
export const toWireTimeOrNull = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);
