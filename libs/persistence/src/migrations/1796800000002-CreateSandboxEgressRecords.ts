import { MigrationInterface, QueryRunner } from 'typeorm';

/** Sandbox egress records (ADR 0021): one row per connection a Session's sandbox made through the proxy. */
export class CreateSandboxEgressRecords1796800000002 implements MigrationInterface {
  name = 'CreateSandboxEgressRecords1796800000002';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "sandbox_egress_records" ("id" BIGSERIAL NOT NULL, "session_id" text NOT NULL, "work_id" text NOT NULL, "kind" text NOT NULL, "host" text NOT NULL, "port" integer NOT NULL, "allowed" boolean NOT NULL, "rule" text, "failure" text, "bytes_out" bigint NOT NULL, "bytes_in" bigint NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_1beaca6214c3e81b254270d8272" PRIMARY KEY ("id"))',
    );
    await runner.query(
      'CREATE INDEX "sandbox_egress_records_session_idx" ON "sandbox_egress_records" ("session_id", "id") ',
    );
    await runner.query(
      'ALTER TABLE "sandbox_egress_records" ADD CONSTRAINT "FK_4e44cca21c13ef7fa066eeb466e" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(
      'ALTER TABLE "sandbox_egress_records" DROP CONSTRAINT "FK_4e44cca21c13ef7fa066eeb466e"',
    );
    await runner.query('DROP INDEX "public"."sandbox_egress_records_session_idx"');
    await runner.query('DROP TABLE "sandbox_egress_records"');
  }
}
