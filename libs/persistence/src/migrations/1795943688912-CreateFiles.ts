import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateFiles1795943688912 implements MigrationInterface {
  name = 'CreateFiles1795943688912';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "files" ("id" text NOT NULL, "workspace_id" text NOT NULL, "filename" text NOT NULL, "mime_type" text NOT NULL, "size_bytes" bigint NOT NULL, "object_key" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "files_size_check" CHECK (size_bytes >= 0), CONSTRAINT "PK_6c16b9093a142e0e7613b04a3d9" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE UNIQUE INDEX "files_object_key_key" ON "files" ("object_key") ');
    await runner.query('CREATE INDEX "files_workspace_idx" ON "files" ("workspace_id", "id") ');
    await runner.query(
      'CREATE TABLE "object_cleanups" ("id" uuid NOT NULL, "object_key" text NOT NULL, "reason" text NOT NULL, "lease_owner" text NOT NULL, "lease_expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "attempts" integer NOT NULL DEFAULT \'0\', "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "object_cleanups_reason_check" CHECK (reason IN (\'upload\', \'delete\')), CONSTRAINT "PK_ea26a649a032fd19343dbb6bd53" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE INDEX "object_cleanups_lease_idx" ON "object_cleanups" ("lease_expires_at") ');
    await runner.query(
      'ALTER TABLE "files" ADD CONSTRAINT "FK_005be504c69e5deddb37d95d2c3" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE NO ACTION ON UPDATE NO ACTION',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "files" DROP CONSTRAINT "FK_005be504c69e5deddb37d95d2c3"');
    await runner.query('DROP INDEX "public"."object_cleanups_lease_idx"');
    await runner.query('DROP TABLE "object_cleanups"');
    await runner.query('DROP INDEX "public"."files_workspace_idx"');
    await runner.query('DROP INDEX "public"."files_object_key_key"');
    await runner.query('DROP TABLE "files"');
  }
}
