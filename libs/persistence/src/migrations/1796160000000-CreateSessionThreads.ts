import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `session_threads` (ADR 0017): one row per Thread of a Session, the primary Thread backfilled for every
 * existing Session with the id `/v1/sessions/{id}/threads` already served (the Session's ULID with the
 * `sthr_` prefix), its status, usage and archive time copied from the Session. `session_events` and
 * `outbox` gain a nullable `session_thread_id` (null = the primary Thread), and a Thread's history read
 * gets its index `(session_id, session_thread_id, seq)`.
 */
export class CreateSessionThreads1796160000000 implements MigrationInterface {
  name = 'CreateSessionThreads1796160000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      `CREATE TABLE "session_threads" ("id" text NOT NULL, "session_id" text NOT NULL, "parent_thread_id" text, "agent_ref" text, "status" text NOT NULL, "usage" jsonb, "stats" jsonb, "archive_requested_at" TIMESTAMP(3) WITH TIME ZONE, "archived_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "session_threads_status_check" CHECK (status IN ('idle', 'running', 'rescheduling', 'terminated')), CONSTRAINT "PK_8c10302b7fc1ea7695e28d11bf4" PRIMARY KEY ("id"))`,
    );
    await runner.query(
      'CREATE INDEX "session_threads_archive_pending_idx" ON "session_threads" ("archive_requested_at") WHERE archive_requested_at IS NOT NULL AND archived_at IS NULL',
    );
    await runner.query(
      'CREATE UNIQUE INDEX "session_threads_primary_key" ON "session_threads" ("session_id") WHERE parent_thread_id IS NULL',
    );
    await runner.query(
      'CREATE INDEX "session_threads_session_idx" ON "session_threads" ("session_id", "id") ',
    );
    await runner.query('ALTER TABLE "outbox" ADD "session_thread_id" text');
    await runner.query('ALTER TABLE "session_events" ADD "session_thread_id" text');
    await runner.query(
      'CREATE INDEX "session_events_thread_seq_idx" ON "session_events" ("session_id", "session_thread_id", "seq") ',
    );
    await runner.query(
      'ALTER TABLE "session_threads" ADD CONSTRAINT "FK_7808f367aacf5640443f4c47fd4" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    // Every existing Session's primary Thread, under the id the Thread routes derive today.
    await runner.query(
      `INSERT INTO "session_threads" (id, session_id, parent_thread_id, agent_ref, status, usage, stats,
                                      archive_requested_at, archived_at, created_at, updated_at)
       SELECT 'sthr_' || substr(id, length('sesn_') + 1), id, NULL, NULL, status, usage, NULL,
              NULL, archived_at, created_at, updated_at
         FROM "sessions"`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "session_threads" DROP CONSTRAINT "FK_7808f367aacf5640443f4c47fd4"');
    await runner.query('DROP INDEX "public"."session_events_thread_seq_idx"');
    await runner.query('ALTER TABLE "session_events" DROP COLUMN "session_thread_id"');
    await runner.query('ALTER TABLE "outbox" DROP COLUMN "session_thread_id"');
    await runner.query('DROP INDEX "public"."session_threads_session_idx"');
    await runner.query('DROP INDEX "public"."session_threads_primary_key"');
    await runner.query('DROP INDEX "public"."session_threads_archive_pending_idx"');
    await runner.query('DROP TABLE "session_threads"');
  }
}
