import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateSkills1795948800228 implements MigrationInterface {
  name = 'CreateSkills1795948800228';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "skills" ("id" text NOT NULL, "workspace_id" text NOT NULL, "display_title" text, "latest_version" integer, "next_version" integer NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_0d3212120f4ecedf90864d7e298" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE INDEX "skills_workspace_idx" ON "skills" ("workspace_id", "id") ');
    await runner.query(
      'CREATE TABLE "skill_versions" ("skill_id" text NOT NULL, "version" integer NOT NULL, "workspace_id" text NOT NULL, "name" text NOT NULL, "description" text NOT NULL, "directory" text NOT NULL, "object_key" text NOT NULL, "archive_size_bytes" bigint NOT NULL, "archive_sha256" text NOT NULL, "expanded_size_bytes" bigint NOT NULL, "file_count" integer NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "skill_versions_sizes_check" CHECK (archive_size_bytes >= 0 AND expanded_size_bytes >= 0 AND file_count >= 1), CONSTRAINT "skill_versions_version_check" CHECK (version >= 1), CONSTRAINT "PK_1da73cd44010762e244968001af" PRIMARY KEY ("skill_id", "version"))',
    );
    await runner.query(
      'CREATE UNIQUE INDEX "skill_versions_object_key_key" ON "skill_versions" ("object_key") ',
    );
    await runner.query(
      'ALTER TABLE "skills" ADD CONSTRAINT "FK_36dc87c93505f0a479f7f47e9a5" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE NO ACTION ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "skill_versions" ADD CONSTRAINT "FK_1ef1caf0168b78a96ece715646d" FOREIGN KEY ("skill_id") REFERENCES "skills"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "skill_versions" DROP CONSTRAINT "FK_1ef1caf0168b78a96ece715646d"');
    await runner.query('ALTER TABLE "skills" DROP CONSTRAINT "FK_36dc87c93505f0a479f7f47e9a5"');
    await runner.query('DROP INDEX "public"."skill_versions_object_key_key"');
    await runner.query('DROP TABLE "skill_versions"');
    await runner.query('DROP INDEX "public"."skills_workspace_idx"');
    await runner.query('DROP TABLE "skills"');
  }
}
