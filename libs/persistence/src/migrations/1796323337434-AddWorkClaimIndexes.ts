import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Poll's claim statement stays an index read at any table size, whatever plan PostgreSQL caches for it:
 * - `work_items_queued_idx` gains `id`, so it holds the whole claim order (`created_at, id`) and LIMIT 1
 *   reads the queue from its front; with `(environment_id, created_at)` a generic plan estimated from an
 *   empty queue sorted every queued row of the Environment on every claim.
 * - `work_items_stopping_idx`: the overdue check (stops past their lease). On `work_items_lease_idx` a
 *   generic plan cannot bound `lease_expires_at <= now` and scanned the whole table once it was large.
 */
export class AddWorkClaimIndexes1796323337434 implements MigrationInterface {
  name = 'AddWorkClaimIndexes1796323337434';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('DROP INDEX "public"."work_items_queued_idx"');
    await runner.query(
      'CREATE INDEX "work_items_stopping_idx" ON "work_items" ("environment_id", "lease_expires_at") WHERE state = \'stopping\'',
    );
    await runner.query(
      'CREATE INDEX "work_items_queued_idx" ON "work_items" ("environment_id", "created_at", "id") WHERE state = \'queued\'',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP INDEX "public"."work_items_queued_idx"');
    await runner.query('DROP INDEX "public"."work_items_stopping_idx"');
    await runner.query(
      'CREATE INDEX "work_items_queued_idx" ON "work_items" ("environment_id", "created_at") WHERE (state = \'queued\'::text)',
    );
  }
}
