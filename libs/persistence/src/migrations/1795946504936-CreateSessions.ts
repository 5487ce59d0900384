import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateSessions1795946504936 implements MigrationInterface {
  name = 'CreateSessions1795946504936';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "outbox" ("id" BIGSERIAL NOT NULL, "session_id" text NOT NULL, "event_seq" bigint NOT NULL, "kind" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "dispatched_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_340ab539f309f03bdaa14aa7649" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE INDEX "outbox_pending_idx" ON "outbox" ("id") WHERE dispatched_at IS NULL');
    await runner.query(
      'CREATE TABLE "sessions" ("id" text NOT NULL, "workspace_id" text NOT NULL, "environment_id" text NOT NULL, "agent_id" text NOT NULL, "agent_version" integer NOT NULL, "agent" jsonb NOT NULL, "title" text, "status" text NOT NULL, "metadata" jsonb NOT NULL, "budget" jsonb, "usage" jsonb NOT NULL, "last_seq" bigint NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "archived_at" TIMESTAMP(3) WITH TIME ZONE, "deleted_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "sessions_status_check" CHECK (status IN (\'idle\', \'running\', \'rescheduling\', \'terminated\')), CONSTRAINT "PK_3238ef96f18b355b671619111bc" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE INDEX "sessions_workspace_idx" ON "sessions" ("workspace_id", "id") ');
    await runner.query(
      'CREATE TABLE "session_events" ("id" text NOT NULL, "session_id" text NOT NULL, "seq" bigint NOT NULL, "type" text NOT NULL, "body" jsonb NOT NULL, "tool_use_id" text, "idempotency_key" text, "processed_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_aeae988940cef0a489a14200af3" PRIMARY KEY ("id"))',
    );
    await runner.query(
      'CREATE UNIQUE INDEX "session_events_idempotency_key" ON "session_events" ("session_id", "idempotency_key") WHERE idempotency_key IS NOT NULL',
    );
    await runner.query(
      'CREATE UNIQUE INDEX "session_events_tool_result_key" ON "session_events" ("session_id", "tool_use_id") WHERE tool_use_id IS NOT NULL',
    );
    await runner.query(
      'CREATE UNIQUE INDEX "session_events_seq_key" ON "session_events" ("session_id", "seq") ',
    );
    await runner.query(
      'ALTER TABLE "sessions" ADD CONSTRAINT "FK_f56ab3c008dffd4a221c95c7cf3" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "sessions" ADD CONSTRAINT "FK_4b2d329af9b0dca6dc3942088b0" FOREIGN KEY ("environment_id") REFERENCES "environments"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "session_events" ADD CONSTRAINT "FK_7e4699f97af1e889b595350dd04" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "session_events" DROP CONSTRAINT "FK_7e4699f97af1e889b595350dd04"');
    await runner.query('ALTER TABLE "sessions" DROP CONSTRAINT "FK_4b2d329af9b0dca6dc3942088b0"');
    await runner.query('ALTER TABLE "sessions" DROP CONSTRAINT "FK_f56ab3c008dffd4a221c95c7cf3"');
    await runner.query('DROP INDEX "public"."session_events_seq_key"');
    await runner.query('DROP INDEX "public"."session_events_tool_result_key"');
    await runner.query('DROP INDEX "public"."session_events_idempotency_key"');
    await runner.query('DROP TABLE "session_events"');
    await runner.query('DROP INDEX "public"."sessions_workspace_idx"');
    await runner.query('DROP TABLE "sessions"');
    await runner.query('DROP INDEX "public"."outbox_pending_idx"');
    await runner.query('DROP TABLE "outbox"');
  }
}
