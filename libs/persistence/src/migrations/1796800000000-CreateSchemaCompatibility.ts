import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `schema_compatibility`: one row holding the lowest schema level a build must understand to run on this
 * database (docs/operations.md, "Schema changes"). Expand migrations leave it alone, so the previous
 * release keeps running during a rolling upgrade and after a rollback; a contract migration (one that drops
 * or renames what the previous release reads) raises it to the build's `SCHEMA_LEVEL`, and older builds then
 * refuse to start instead of failing on their first query.
 */
export class CreateSchemaCompatibility1796800000000 implements MigrationInterface {
  name = 'CreateSchemaCompatibility1796800000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "schema_compatibility" ("singleton" boolean NOT NULL DEFAULT true, "min_code_level" integer NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "schema_compatibility_pkey" PRIMARY KEY ("singleton"), CONSTRAINT "schema_compatibility_singleton" CHECK ("singleton"))',
    );
    await runner.query('INSERT INTO "schema_compatibility" ("singleton", "min_code_level") VALUES (true, 1)');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE "schema_compatibility"');
  }
}
