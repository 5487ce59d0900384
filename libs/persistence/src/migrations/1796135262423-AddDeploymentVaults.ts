import { MigrationInterface, QueryRunner } from 'typeorm';

export class AddDeploymentVaults1796135262423 implements MigrationInterface {
  name = 'AddDeploymentVaults1796135262423';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "deployments" ADD "vault_ids" jsonb NOT NULL DEFAULT \'[]\'');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "deployments" DROP COLUMN "vault_ids"');
  }
}
