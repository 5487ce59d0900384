import { MigrationInterface, QueryRunner } from 'typeorm';

/** The kept copy of each Skill version's files for activation (docs/api-guide.md "What the model sees"). */
export class CreateSkillVersionFiles1796143000000 implements MigrationInterface {
  name = 'CreateSkillVersionFiles1796143000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "skill_version_files" ("skill_id" text NOT NULL, "version" integer NOT NULL, "path" text NOT NULL, "content" text, CONSTRAINT "PK_b30d030c7b0bf244ce6687e42a3" PRIMARY KEY ("skill_id", "version", "path"))',
    );
    await runner.query(
      'ALTER TABLE "skill_version_files" ADD CONSTRAINT "FK_3d249cf1d06a8150574578b5007" FOREIGN KEY ("skill_id", "version") REFERENCES "skill_versions"("skill_id","version") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "skill_version_files" DROP CONSTRAINT "FK_3d249cf1d06a8150574578b5007"');
    await runner.query('DROP TABLE "skill_version_files"');
  }
}
