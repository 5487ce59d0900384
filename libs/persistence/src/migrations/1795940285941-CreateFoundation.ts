import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateFoundation1795940285941 implements MigrationInterface {
  name = 'CreateFoundation1795940285941';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "workspaces" ("id" text NOT NULL, "name" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_098656ae401f3e1a4586f47fd8e" PRIMARY KEY ("id"))',
    );
    await runner.query(
      'CREATE TABLE "agents" ("id" text NOT NULL, "workspace_id" text NOT NULL, "current_version" integer NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "archived_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_9c653f28ae19c5884d5baf6a1d9" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE INDEX "agents_workspace_idx" ON "agents" ("workspace_id", "id") ');
    await runner.query(
      'CREATE TABLE "agent_versions" ("agent_id" text NOT NULL, "version" integer NOT NULL, "definition" jsonb NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_b392370a19a493bde3c73566159" PRIMARY KEY ("agent_id", "version"))',
    );
    await runner.query(
      'CREATE TABLE "environments" ("id" text NOT NULL, "workspace_id" text NOT NULL, "name" text NOT NULL, "description" text, "config" jsonb NOT NULL, "scope" text, "metadata" jsonb NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "archived_at" TIMESTAMP(3) WITH TIME ZONE, "deleted_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_ec32d12469ec3c2f2f20c4f5e71" PRIMARY KEY ("id"))',
    );
    await runner.query(
      'CREATE UNIQUE INDEX "environments_name_key" ON "environments" ("workspace_id", "name") WHERE deleted_at IS NULL',
    );
    await runner.query('CREATE INDEX "environments_workspace_idx" ON "environments" ("workspace_id", "id") ');
    await runner.query(
      'CREATE TABLE "api_keys" ("id" text NOT NULL, "workspace_id" text NOT NULL, "environment_id" text, "label" text NOT NULL, "digest" bytea NOT NULL, "key_hint" text NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), "revoked_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE UNIQUE INDEX "api_keys_digest_key" ON "api_keys" ("digest") ');
    await runner.query('CREATE INDEX "api_keys_workspace_idx" ON "api_keys" ("workspace_id", "id") ');
    await runner.query(
      'ALTER TABLE "agents" ADD CONSTRAINT "FK_e4073e164112770e13f73919bac" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "agent_versions" ADD CONSTRAINT "FK_d17f495bbb2d8a2233b93166b04" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "environments" ADD CONSTRAINT "FK_8dd4bba1c98194a69ed33a27609" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "api_keys" ADD CONSTRAINT "FK_deb68fe8625b21785d1c48283e4" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "api_keys" ADD CONSTRAINT "FK_481ca7cc5ed7ece012152bef73c" FOREIGN KEY ("environment_id") REFERENCES "environments"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    // The default Workspace exists after `mango migrate` (decisions: Tenancy and credentials).
    await runner.query(
      'INSERT INTO "workspaces" ("id", "name") VALUES (\'wrkspc_default\', \'Default\') ON CONFLICT DO NOTHING',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "api_keys" DROP CONSTRAINT "FK_481ca7cc5ed7ece012152bef73c"');
    await runner.query('ALTER TABLE "api_keys" DROP CONSTRAINT "FK_deb68fe8625b21785d1c48283e4"');
    await runner.query('ALTER TABLE "environments" DROP CONSTRAINT "FK_8dd4bba1c98194a69ed33a27609"');
    await runner.query('ALTER TABLE "agent_versions" DROP CONSTRAINT "FK_d17f495bbb2d8a2233b93166b04"');
    await runner.query('ALTER TABLE "agents" DROP CONSTRAINT "FK_e4073e164112770e13f73919bac"');
    await runner.query('DROP INDEX "public"."api_keys_workspace_idx"');
    await runner.query('DROP INDEX "public"."api_keys_digest_key"');
    await runner.query('DROP TABLE "api_keys"');
    await runner.query('DROP INDEX "public"."environments_workspace_idx"');
    await runner.query('DROP INDEX "public"."environments_name_key"');
    await runner.query('DROP TABLE "environments"');
    await runner.query('DROP TABLE "agent_versions"');
    await runner.query('DROP INDEX "public"."agents_workspace_idx"');
    await runner.query('DROP TABLE "agents"');
    await runner.query('DROP TABLE "workspaces"');
  }
}
