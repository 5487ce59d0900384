import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateMemoryStores1795948827054 implements MigrationInterface {
  name = 'CreateMemoryStores1795948827054';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "memory_stores" ("id" text NOT NULL, "workspace_id" text NOT NULL, "name" text NOT NULL, "description" text NOT NULL DEFAULT \'\', "metadata" jsonb NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "archived_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_e24194f586b09aca519dec96835" PRIMARY KEY ("id"))',
    );
    await runner.query(
      'CREATE INDEX "memory_stores_workspace_idx" ON "memory_stores" ("workspace_id", "id") ',
    );
    await runner.query(
      'CREATE TABLE "memory_versions" ("id" text NOT NULL, "memory_store_id" text NOT NULL, "memory_id" text NOT NULL, "operation" text NOT NULL, "path" text, "content_sha256" text, "content_size_bytes" integer, "object_key" text, "created_by_type" text NOT NULL, "created_by_id" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "redacted_at" TIMESTAMP(3) WITH TIME ZONE, "redacted_by_type" text, "redacted_by_id" text, CONSTRAINT "memory_versions_actor_check" CHECK (created_by_type IN (\'api_actor\', \'session_actor\')), CONSTRAINT "memory_versions_operation_check" CHECK (operation IN (\'created\', \'modified\', \'deleted\')), CONSTRAINT "PK_8cf4934bc89c443c59475b2ad3e" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE INDEX "memory_versions_object_idx" ON "memory_versions" ("object_key") ');
    await runner.query('CREATE INDEX "memory_versions_memory_idx" ON "memory_versions" ("memory_id", "id") ');
    await runner.query(
      'CREATE INDEX "memory_versions_store_idx" ON "memory_versions" ("memory_store_id", "id") ',
    );
    await runner.query(
      'CREATE TABLE "memories" ("id" text NOT NULL, "memory_store_id" text NOT NULL, "path" text COLLATE "C" NOT NULL, "content_sha256" text NOT NULL, "content_size_bytes" integer NOT NULL, "object_key" text NOT NULL, "memory_version_id" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_aaa0692d9496fe827b0568612f8" PRIMARY KEY ("id"))',
    );
    await runner.query(
      'CREATE UNIQUE INDEX "memories_store_path_key" ON "memories" ("memory_store_id", "path") ',
    );
    await runner.query(
      'CREATE TABLE "session_memory_stores" ("session_id" text NOT NULL, "memory_store_id" text NOT NULL, "position" integer NOT NULL, "access" text NOT NULL, "instructions" text, "name" text NOT NULL, "description" text NOT NULL, "mount_path" text NOT NULL, CONSTRAINT "session_memory_stores_access_check" CHECK (access IN (\'read_write\', \'read_only\')), CONSTRAINT "PK_256a69429b9c1495b25a39af98f" PRIMARY KEY ("session_id", "memory_store_id"))',
    );
    await runner.query(
      'CREATE INDEX "session_memory_stores_store_idx" ON "session_memory_stores" ("memory_store_id") ',
    );
    await runner.query(
      'ALTER TABLE "memory_stores" ADD CONSTRAINT "FK_cb860b196db205256a267f1e789" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE NO ACTION ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "memory_versions" ADD CONSTRAINT "FK_a9aace4d3e67a2720b9f14f5665" FOREIGN KEY ("memory_store_id") REFERENCES "memory_stores"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "memories" ADD CONSTRAINT "FK_8da15e7d9381d6527f7ba9b4df8" FOREIGN KEY ("memory_store_id") REFERENCES "memory_stores"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "session_memory_stores" ADD CONSTRAINT "FK_1853939b90ab6a36c8163f9123b" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(
      'ALTER TABLE "session_memory_stores" DROP CONSTRAINT "FK_1853939b90ab6a36c8163f9123b"',
    );
    await runner.query('ALTER TABLE "memories" DROP CONSTRAINT "FK_8da15e7d9381d6527f7ba9b4df8"');
    await runner.query('ALTER TABLE "memory_versions" DROP CONSTRAINT "FK_a9aace4d3e67a2720b9f14f5665"');
    await runner.query('ALTER TABLE "memory_stores" DROP CONSTRAINT "FK_cb860b196db205256a267f1e789"');
    await runner.query('DROP INDEX "public"."session_memory_stores_store_idx"');
    await runner.query('DROP TABLE "session_memory_stores"');
    await runner.query('DROP INDEX "public"."memories_store_path_key"');
    await runner.query('DROP TABLE "memories"');
    await runner.query('DROP INDEX "public"."memory_versions_store_idx"');
    await runner.query('DROP INDEX "public"."memory_versions_memory_idx"');
    await runner.query('DROP INDEX "public"."memory_versions_object_idx"');
    await runner.query('DROP TABLE "memory_versions"');
    await runner.query('DROP INDEX "public"."memory_stores_workspace_idx"');
    await runner.query('DROP TABLE "memory_stores"');
  }
}
