/** How the Files feature behaves; apps/files fills it from its env DTO. */
export interface FilesSettings {
  /** Largest accepted File in bytes (413 `request_too_large` beyond it). */
  maxBytes: number;
  /** Size of each part of a multipart object upload (≥ 5 MiB); at most one part is held in memory. */
  partBytes: number;
  /** How long an upload's (or a sweeper's) cleanup lease lasts; holders renew it every third of this. */
  leaseMs: number;
  /** How often the sweeper looks for abandoned cleanups; 0 disables the timer (`sweepOnce` still works). */
  sweepIntervalMs: number;
  /** How long past its lease an abandoned cleanup waits before a sweeper claims it. */
  sweepGraceMs: number;
}

export const MIB = 1024 * 1024;

export const DEFAULT_FILES_SETTINGS: FilesSettings = {
  maxBytes: 500 * MIB,
  partBytes: 8 * MIB,
  leaseMs: 60_000,
  sweepIntervalMs: 30_000,
  sweepGraceMs: 30_000,
};

export const FILES_SETTINGS = Symbol('FILES_SETTINGS');
