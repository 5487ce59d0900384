import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `audit_log`: one row per write through the API (who, what, when, the request id and the outcome;
 * docs/api-guide.md, "Audit log"). Append-only: a trigger refuses every UPDATE and TRUNCATE; rows leave
 * only by the retention pruner's DELETE.
 */
export class CreateAuditLog1796800000001 implements MigrationInterface {
  name = 'CreateAuditLog1796800000001';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "audit_log" ("id" text NOT NULL, "workspace_id" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "actor_kind" text NOT NULL, "actor_id" text NOT NULL, "actor_label" text, "operation" text NOT NULL, "resource_id" text, "request_id" text NOT NULL, "status_code" integer NOT NULL, "outcome" text NOT NULL, CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id"), CONSTRAINT "audit_log_outcome" CHECK ("outcome" IN (\'succeeded\', \'failed\')), CONSTRAINT "audit_log_actor_kind" CHECK ("actor_kind" IN (\'workspace_key\', \'environment_key\', \'work_token\')))',
    );
    await runner.query('CREATE INDEX "audit_log_workspace_idx" ON "audit_log" ("workspace_id", "id")');
    await runner.query(
      'CREATE INDEX "audit_log_resource_idx" ON "audit_log" ("workspace_id", "resource_id", "id")',
    );
    await runner.query('CREATE INDEX "audit_log_created_idx" ON "audit_log" ("created_at")');
    await runner.query(
      `CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         RAISE EXCEPTION 'audit_log is append-only (%)', TG_OP USING ERRCODE = 'insufficient_privilege';
       END $$`,
    );
    await runner.query(
      'CREATE TRIGGER "audit_log_no_update" BEFORE UPDATE ON "audit_log" FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()',
    );
    await runner.query(
      'CREATE TRIGGER "audit_log_no_truncate" BEFORE TRUNCATE ON "audit_log" FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE "audit_log"');
    await runner.query('DROP FUNCTION audit_log_append_only()');
  }
}
