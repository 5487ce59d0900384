import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';

/** INSERT one fully-built entity (no pre-SELECT as `save` would do). Typed jsonb columns need the cast. */
export async function insertRow<T extends ObjectLiteral>(
  em: EntityManager,
  target: EntityTarget<T>,
  row: T,
): Promise<void> {
  await em.insert(target, row as QueryDeepPartialEntity<T>);
}
