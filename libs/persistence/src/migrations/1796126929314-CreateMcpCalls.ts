import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateMcpCalls1796126929314 implements MigrationInterface {
  name = 'CreateMcpCalls1796126929314';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE TABLE "mcp_calls" ("mcp_tool_use_id" text NOT NULL, "session_id" text NOT NULL, "server_name" text NOT NULL, "tool_name" text NOT NULL, "intent_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "result_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_e017e5b2726f6a5cee94ffbfdb0" PRIMARY KEY ("mcp_tool_use_id"))',
    );
    await runner.query('CREATE INDEX "mcp_calls_session_idx" ON "mcp_calls" ("session_id") ');
    await runner.query(
      'ALTER TABLE "mcp_calls" ADD CONSTRAINT "FK_05720ed55ef4794ab82b3d22cd8" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "mcp_calls" DROP CONSTRAINT "FK_05720ed55ef4794ab82b3d22cd8"');
    await runner.query('DROP INDEX "public"."mcp_calls_session_idx"');
    await runner.query('DROP TABLE "mcp_calls"');
  }
}
