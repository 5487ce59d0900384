import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `idempotency_keys`: the `Idempotency-Key`s of POST requests with their first response, written in the
 * same transaction as the write they protect (docs/api-guide.md, "Idempotent requests"); pruned past
 * `expires_at`.
 */
export class CreateIdempotencyKeys1796700000000 implements MigrationInterface {
  name = 'CreateIdempotencyKeys1796700000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "idempotency_keys" ("workspace_id" text NOT NULL, "credential_kind" text NOT NULL, "key" text NOT NULL, "request_digest" text NOT NULL, "request_method" text NOT NULL, "request_path" text NOT NULL, "request_id" text NOT NULL, "response_status" integer NOT NULL, "response_body" json, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "PK_5a5d2e40b7f48c10ae0d3afe3c3" PRIMARY KEY ("workspace_id", "credential_kind", "key"))',
    );
    await runner.query('CREATE INDEX "idempotency_keys_expires_idx" ON "idempotency_keys" ("expires_at") ');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP INDEX "public"."idempotency_keys_expires_idx"');
    await runner.query('DROP TABLE "idempotency_keys"');
  }
}
