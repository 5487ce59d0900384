import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import { ID_PREFIXES, IdKind } from '@mango/domain-kernel';

// The id format (prefixes, `isId`) lives in `@mango/domain-kernel`; this lib mints ids.
export { DEFAULT_WORKSPACE_ID, ID_PREFIXES, idPattern, isId, ULID_PATTERN } from '@mango/domain-kernel';
export type { IdKind } from '@mango/domain-kernel';

/**
 * Bytes from the OS CSPRNG, drawn from a pooled buffer: one `randomFillSync` per 4 KiB instead of one
 * call per id or credential (every request mints a request id, every Poll a Work token). Bytes handed
 * out are zeroed in the pool, so no past credential's randomness stays behind in it.
 */
const randomPool = Buffer.alloc(4096);
let randomAt = randomPool.length;

function refill(): void {
  randomFillSync(randomPool);
  randomAt = 0;
}

/** `size` (at most 4096) fresh random bytes from the pooled CSPRNG, in a buffer of their own. */
export function pooledRandomBytes(size: number): Buffer {
  if (size > randomPool.length) throw new RangeError(`pooledRandomBytes: ${size} > ${randomPool.length}`);
  if (randomAt + size > randomPool.length) refill();
  const out = Buffer.from(randomPool.subarray(randomAt, randomAt + size));
  randomPool.fill(0, randomAt, randomAt + size);
  randomAt += size;
  return out;
}

/** ULID's random characters (one pooled byte each). */
function pooledRandom(): number {
  if (randomAt === randomPool.length) refill();
  const byte = randomPool[randomAt]!;
  randomPool[randomAt++] = 0;
  return byte / 256;
}

const nextUlid = monotonicFactory(pooledRandom);

/** A new id of this kind: the kind's prefix plus a monotonic ULID (`now` is the creation time). */
export function newId(kind: IdKind, now: number = Date.now()): string {
  return ID_PREFIXES[kind] + nextUlid(now);
}
