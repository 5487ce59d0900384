import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import { ID_PREFIXES, IdKind } from '@mango/domain-kernel';

// The id format (prefixes, `isId`) lives in `@mango/domain-kernel`; this lib mints ids.
export { DEFAULT_WORKSPACE_ID, ID_PREFIXES, idPattern, isId, ULID_PATTERN } from '@mango/domain-kernel';
export type { IdKind } from '@mango/domain-kernel';

/**
 * ULID's random characters from the OS CSPRNG, drawn from a pooled buffer: one `randomFillSync` per 4 KiB
 * instead of one `getRandomValues` call per character (every request mints a request id).
 */
const randomPool = Buffer.alloc(4096);
let randomAt = randomPool.length;
function pooledRandom(): number {
  if (randomAt === randomPool.length) {
    randomFillSync(randomPool);
    randomAt = 0;
  }
  return randomPool[randomAt++]! / 256;
}

const nextUlid = monotonicFactory(pooledRandom);

/** A new id of this kind: the kind's prefix plus a monotonic ULID (`now` is the creation time). */
export function newId(kind: IdKind, now: number = Date.now()): string {
  return ID_PREFIXES[kind] + nextUlid(now);
}
