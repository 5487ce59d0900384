import { monotonicFactory } from 'ulid';
import { ID_PREFIXES, IdKind } from '@mango/domain-kernel';

// The id format (prefixes, `isId`) lives in `@mango/domain-kernel`; this lib mints ids.
export { DEFAULT_WORKSPACE_ID, ID_PREFIXES, idPattern, isId, ULID_PATTERN } from '@mango/domain-kernel';
export type { IdKind } from '@mango/domain-kernel';

const nextUlid = monotonicFactory();

/** A new id of this kind: the kind's prefix plus a monotonic ULID (`now` is the creation time). */
export function newId(kind: IdKind, now: number = Date.now()): string {
  return ID_PREFIXES[kind] + nextUlid(now);
}
