import { MigrationInterface, QueryRunner } from 'typeorm';

export class AddVaultCredentialRefreshClaims1796661162194 implements MigrationInterface {
  name = 'AddVaultCredentialRefreshClaims1796661162194';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "vault_credentials" ADD "version" integer NOT NULL DEFAULT \'0\'');
    await runner.query('ALTER TABLE "vault_credentials" ADD "refresh_claim" text');
    await runner.query(
      'ALTER TABLE "vault_credentials" ADD "refresh_claim_expires_at" TIMESTAMP(3) WITH TIME ZONE',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "vault_credentials" DROP COLUMN "refresh_claim_expires_at"');
    await runner.query('ALTER TABLE "vault_credentials" DROP COLUMN "refresh_claim"');
    await runner.query('ALTER TABLE "vault_credentials" DROP COLUMN "version"');
  }
}
