import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateWorkItems1795943154952 implements MigrationInterface {
  name = 'CreateWorkItems1795943154952';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "work_items" ("id" text NOT NULL, "workspace_id" text NOT NULL, "environment_id" text NOT NULL, "kind" text NOT NULL, "session_id" text, "state" text NOT NULL, "metadata" jsonb NOT NULL, "token_digest" bytea, "worker_id" text, "claim_count" integer NOT NULL DEFAULT \'0\', "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "claimed_at" TIMESTAMP(3) WITH TIME ZONE, "acknowledged_at" TIMESTAMP(3) WITH TIME ZONE, "started_at" TIMESTAMP(3) WITH TIME ZONE, "latest_heartbeat_at" TIMESTAMP(3) WITH TIME ZONE, "lease_expires_at" TIMESTAMP(3) WITH TIME ZONE, "ttl_seconds" integer, "stop_requested_at" TIMESTAMP(3) WITH TIME ZONE, "stopped_at" TIMESTAMP(3) WITH TIME ZONE, "expires_at" TIMESTAMP(3) WITH TIME ZONE, "result" jsonb, "result_recorded_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "work_items_result_check" CHECK (kind = \'healthcheck\' OR result IS NULL), CONSTRAINT "work_items_kind_check" CHECK ((kind = \'session\' AND session_id IS NOT NULL AND expires_at IS NULL) OR (kind = \'healthcheck\' AND session_id IS NULL AND expires_at IS NOT NULL)), CONSTRAINT "work_items_state_check" CHECK (state IN (\'queued\', \'starting\', \'active\', \'stopping\', \'stopped\')), CONSTRAINT "PK_afbfa01728533c866eafaf6f160" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE UNIQUE INDEX "work_items_token_digest_key" ON "work_items" ("token_digest") ');
    await runner.query(
      'CREATE UNIQUE INDEX "work_items_live_session_key" ON "work_items" ("session_id") WHERE session_id IS NOT NULL AND state <> \'stopped\'',
    );
    await runner.query(
      'CREATE INDEX "work_items_deadline_idx" ON "work_items" ("environment_id", "expires_at") WHERE kind = \'healthcheck\' AND state <> \'stopped\'',
    );
    await runner.query(
      'CREATE INDEX "work_items_lease_idx" ON "work_items" ("environment_id", "lease_expires_at") WHERE state IN (\'starting\', \'active\', \'stopping\')',
    );
    await runner.query(
      'CREATE INDEX "work_items_queued_idx" ON "work_items" ("environment_id", "created_at") WHERE state = \'queued\'',
    );
    await runner.query('CREATE INDEX "work_items_environment_idx" ON "work_items" ("environment_id", "id") ');
    await runner.query(
      'CREATE TABLE "work_pollers" ("environment_id" text NOT NULL, "worker_id" text NOT NULL, "last_seen_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_cae7e4acaa7eb975bc88c5df95d" PRIMARY KEY ("environment_id", "worker_id"))',
    );
    await runner.query(
      'ALTER TABLE "work_items" ADD CONSTRAINT "FK_414c3aeaefc0134a881a29e00c6" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "work_items" ADD CONSTRAINT "FK_ecc017ab039e3bc89181935176f" FOREIGN KEY ("environment_id") REFERENCES "environments"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "work_pollers" ADD CONSTRAINT "FK_81f93bb0eb6ab29ff7f524481db" FOREIGN KEY ("environment_id") REFERENCES "environments"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "work_pollers" DROP CONSTRAINT "FK_81f93bb0eb6ab29ff7f524481db"');
    await runner.query('ALTER TABLE "work_items" DROP CONSTRAINT "FK_ecc017ab039e3bc89181935176f"');
    await runner.query('ALTER TABLE "work_items" DROP CONSTRAINT "FK_414c3aeaefc0134a881a29e00c6"');
    await runner.query('DROP TABLE "work_pollers"');
    await runner.query('DROP INDEX "public"."work_items_environment_idx"');
    await runner.query('DROP INDEX "public"."work_items_queued_idx"');
    await runner.query('DROP INDEX "public"."work_items_lease_idx"');
    await runner.query('DROP INDEX "public"."work_items_deadline_idx"');
    await runner.query('DROP INDEX "public"."work_items_live_session_key"');
    await runner.query('DROP INDEX "public"."work_items_token_digest_key"');
    await runner.query('DROP TABLE "work_items"');
  }
}
