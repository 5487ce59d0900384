import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateVaults1796125827197 implements MigrationInterface {
  name = 'CreateVaults1796125827197';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "vaults" ("id" text NOT NULL, "workspace_id" text NOT NULL, "display_name" text NOT NULL, "metadata" jsonb NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "archived_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_487a5346fa3693a430b6d6db60c" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE INDEX "vaults_workspace_idx" ON "vaults" ("workspace_id", "id") ');
    await runner.query(
      'CREATE TABLE "vault_credentials" ("id" text NOT NULL, "vault_id" text NOT NULL, "workspace_id" text NOT NULL, "kind" text NOT NULL, "display_name" text, "metadata" jsonb NOT NULL, "url_key" text NOT NULL, "auth" jsonb NOT NULL, "kek_id" text, "wrapped_key" bytea, "secret_ciphertext" bytea, "refresh_failure" jsonb, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "archived_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "vault_credentials_sealed_check" CHECK ((kek_id IS NULL) = (wrapped_key IS NULL) AND (kek_id IS NULL) = (secret_ciphertext IS NULL)), CONSTRAINT "vault_credentials_kind_check" CHECK (kind IN (\'static_bearer\', \'mcp_oauth\')), CONSTRAINT "PK_d9a12167952c643b2b64d80211a" PRIMARY KEY ("id"))',
    );
    await runner.query('CREATE INDEX "vault_credentials_kek_idx" ON "vault_credentials" ("kek_id") ');
    await runner.query(
      'CREATE UNIQUE INDEX "vault_credentials_active_url_key" ON "vault_credentials" ("vault_id", "url_key") WHERE archived_at IS NULL',
    );
    await runner.query(
      'CREATE INDEX "vault_credentials_vault_idx" ON "vault_credentials" ("vault_id", "id") ',
    );
    await runner.query('ALTER TABLE "sessions" ADD "vault_ids" jsonb NOT NULL DEFAULT \'[]\'');
    await runner.query(
      'ALTER TABLE "vaults" ADD CONSTRAINT "FK_0f6f28d073e9c182a63c4323317" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE NO ACTION ON UPDATE NO ACTION',
    );
    await runner.query(
      'ALTER TABLE "vault_credentials" ADD CONSTRAINT "FK_575fbb67507c6548b43bb9d5784" FOREIGN KEY ("vault_id") REFERENCES "vaults"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "vault_credentials" DROP CONSTRAINT "FK_575fbb67507c6548b43bb9d5784"');
    await runner.query('ALTER TABLE "vaults" DROP CONSTRAINT "FK_0f6f28d073e9c182a63c4323317"');
    await runner.query('ALTER TABLE "sessions" DROP COLUMN "vault_ids"');
    await runner.query('DROP INDEX "public"."vault_credentials_vault_idx"');
    await runner.query('DROP INDEX "public"."vault_credentials_active_url_key"');
    await runner.query('DROP INDEX "public"."vault_credentials_kek_idx"');
    await runner.query('DROP TABLE "vault_credentials"');
    await runner.query('DROP INDEX "public"."vaults_workspace_idx"');
    await runner.query('DROP TABLE "vaults"');
  }
}
