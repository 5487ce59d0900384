import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateDeployments1796126714105 implements MigrationInterface {
  name = 'CreateDeployments1796126714105';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "deployments" ("id" text NOT NULL, "workspace_id" text NOT NULL, "name" text NOT NULL, "description" text, "agent_id" text NOT NULL, "agent_version" integer NOT NULL, "environment_id" text NOT NULL, "initial_events" jsonb NOT NULL, "resources" jsonb NOT NULL, "schedule" jsonb, "status" text NOT NULL, "paused_reason" jsonb, "budget" jsonb, "metadata" jsonb NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "archived_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "deployments_status_check" CHECK (status IN (\'active\', \'paused\')), CONSTRAINT "PK_1e5627acb3c950deb83fe98fc48" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE INDEX "deployments_agent_idx" ON "deployments" ("agent_id") ');
    await runner.query('CREATE INDEX "deployments_workspace_idx" ON "deployments" ("workspace_id", "id") ');
    await runner.query(
      'CREATE TABLE "deployment_runs" ("id" text NOT NULL, "workspace_id" text NOT NULL, "deployment_id" text NOT NULL, "agent_id" text NOT NULL, "agent_version" integer NOT NULL, "session_id" text, "error" jsonb, "trigger_type" text NOT NULL, "scheduled_at" TIMESTAMP(3) WITH TIME ZONE, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "deployment_runs_outcome_check" CHECK ((session_id IS NULL) <> (error IS NULL)), CONSTRAINT "PK_aff8ab65b9a170f0d70ccb42de9" PRIMARY KEY ("id"))',
    );
    await runner.query(
      'CREATE UNIQUE INDEX "deployment_runs_scheduled_key" ON "deployment_runs" ("deployment_id", "scheduled_at") WHERE scheduled_at IS NOT NULL',
    );
    await runner.query(
      'CREATE INDEX "deployment_runs_workspace_idx" ON "deployment_runs" ("workspace_id", "id") ',
    );
    await runner.query(
      'CREATE INDEX "deployment_runs_deployment_idx" ON "deployment_runs" ("deployment_id", "id") ',
    );
    await runner.query('ALTER TABLE "sessions" ADD "deployment_id" text');
    await runner.query(
      'CREATE INDEX "sessions_deployment_idx" ON "sessions" ("deployment_id", "id") WHERE deployment_id IS NOT NULL',
    );
    await runner.query(
      'ALTER TABLE "deployments" ADD CONSTRAINT "FK_2aa61ef61fc263b94a6b771ea3f" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "deployment_runs" ADD CONSTRAINT "FK_1b9e9ca169a77a8f6aef2ee4fa6" FOREIGN KEY ("deployment_id") REFERENCES "deployments"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "deployment_runs" DROP CONSTRAINT "FK_1b9e9ca169a77a8f6aef2ee4fa6"');
    await runner.query('ALTER TABLE "deployments" DROP CONSTRAINT "FK_2aa61ef61fc263b94a6b771ea3f"');
    await runner.query('DROP INDEX "public"."sessions_deployment_idx"');
    await runner.query('ALTER TABLE "sessions" DROP COLUMN "deployment_id"');
    await runner.query('DROP INDEX "public"."deployment_runs_deployment_idx"');
    await runner.query('DROP INDEX "public"."deployment_runs_workspace_idx"');
    await runner.query('DROP INDEX "public"."deployment_runs_scheduled_key"');
    await runner.query('DROP TABLE "deployment_runs"');
    await runner.query('DROP INDEX "public"."deployments_workspace_idx"');
    await runner.query('DROP INDEX "public"."deployments_agent_idx"');
    await runner.query('DROP TABLE "deployments"');
  }
}
