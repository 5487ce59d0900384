/** How the Memory feature behaves; apps/files fills it from its env DTO. */
export interface MemorySettings {
  /** Largest Memory content in UTF-8 bytes (hosted: 102,400); beyond it 413 `request_too_large`. */
  maxContentBytes: number;
  /** Most Memories one Store holds at once (hosted SDK comments: 2000); beyond it 409. */
  maxMemoriesPerStore: number;
  /** Lease of a content write's cleanup intent (shared with Files' `object_cleanups` sweeper). */
  leaseMs: number;
}

export const DEFAULT_MEMORY_SETTINGS: MemorySettings = {
  maxContentBytes: 102_400,
  maxMemoriesPerStore: 2000,
  leaseMs: 60_000,
};

export const MEMORY_SETTINGS = Symbol('MEMORY_SETTINGS');
