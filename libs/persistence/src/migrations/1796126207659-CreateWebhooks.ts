import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateWebhooks1796126207659 implements MigrationInterface {
  name = 'CreateWebhooks1796126207659';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "webhooks" ("id" text NOT NULL, "workspace_id" text NOT NULL, "url" text NOT NULL, "event_types" text array NOT NULL, "description" text, "metadata" jsonb NOT NULL, "secrets" jsonb NOT NULL, "disabled_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "deleted_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_9e8795cfc899ab7bdaa831e8527" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE INDEX "webhooks_workspace_idx" ON "webhooks" ("workspace_id", "id") ');
    await runner.query(
      'CREATE TABLE "webhook_events" ("id" text NOT NULL, "workspace_id" text NOT NULL, "type" text NOT NULL, "data" jsonb NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_4cba37e6a0acb5e1fc49c34ebfd" PRIMARY KEY ("id"))',
    );
    await runner.query(
      'CREATE INDEX "webhook_events_workspace_idx" ON "webhook_events" ("workspace_id", "id") ',
    );
    await runner.query(
      'CREATE TABLE "webhook_deliveries" ("id" text NOT NULL, "webhook_id" text NOT NULL, "event_id" text NOT NULL, "trigger" text NOT NULL, "state" text NOT NULL, "attempts" integer NOT NULL DEFAULT \'0\', "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "dispatched_at" TIMESTAMP(3) WITH TIME ZONE, "completed_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_535dd409947fb6d8fc6dfc0112a" PRIMARY KEY ("id"))',
    );
    await runner.query(
      'CREATE INDEX "webhook_deliveries_webhook_idx" ON "webhook_deliveries" ("webhook_id", "id") ',
    );
    await runner.query(
      'CREATE INDEX "webhook_deliveries_pending_idx" ON "webhook_deliveries" ("id") WHERE dispatched_at IS NULL',
    );
    await runner.query(
      'CREATE TABLE "webhook_delivery_attempts" ("id" BIGSERIAL NOT NULL, "delivery_id" text NOT NULL, "webhook_id" text NOT NULL, "attempt" integer NOT NULL, "status_code" integer, "latency_ms" integer NOT NULL, "error" text, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_59ef9124585b56c18b98548a0c6" PRIMARY KEY ("id"))',
    );
    await runner.query(
      'CREATE INDEX "webhook_delivery_attempts_webhook_idx" ON "webhook_delivery_attempts" ("webhook_id", "id") ',
    );
    await runner.query(
      'CREATE UNIQUE INDEX "webhook_delivery_attempts_key" ON "webhook_delivery_attempts" ("delivery_id", "attempt") ',
    );
    await runner.query(
      'ALTER TABLE "webhooks" ADD CONSTRAINT "FK_3ed8fd5f3708d4acac990ad2369" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "FK_a0286aeb96db651efd1ae2966f2" FOREIGN KEY ("webhook_id") REFERENCES "webhooks"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "FK_27d1ee90033bdafe0ffe8f1be6f" FOREIGN KEY ("event_id") REFERENCES "webhook_events"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "webhook_delivery_attempts" ADD CONSTRAINT "FK_647916c401c0c275df5f00c148f" FOREIGN KEY ("delivery_id") REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(
      'ALTER TABLE "webhook_delivery_attempts" DROP CONSTRAINT "FK_647916c401c0c275df5f00c148f"',
    );
    await runner.query('ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "FK_27d1ee90033bdafe0ffe8f1be6f"');
    await runner.query('ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "FK_a0286aeb96db651efd1ae2966f2"');
    await runner.query('ALTER TABLE "webhooks" DROP CONSTRAINT "FK_3ed8fd5f3708d4acac990ad2369"');
    await runner.query('DROP INDEX "public"."webhook_delivery_attempts_key"');
    await runner.query('DROP INDEX "public"."webhook_delivery_attempts_webhook_idx"');
    await runner.query('DROP TABLE "webhook_delivery_attempts"');
    await runner.query('DROP INDEX "public"."webhook_deliveries_pending_idx"');
    await runner.query('DROP INDEX "public"."webhook_deliveries_webhook_idx"');
    await runner.query('DROP TABLE "webhook_deliveries"');
    await runner.query('DROP INDEX "public"."webhook_events_workspace_idx"');
    await runner.query('DROP TABLE "webhook_events"');
    await runner.query('DROP INDEX "public"."webhooks_workspace_idx"');
    await runner.query('DROP TABLE "webhooks"');
  }
}
