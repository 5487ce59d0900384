import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `sessions.prompt_inputs`: the Skill listing entries and Memory mounts a Session's model requests show,
 * frozen at create (libs/persistence/src/prompt-inputs.ts). Null for Sessions created before it: their
 * model steps read the same inputs from `skill_versions` and `session_memory_stores`.
 */
export class AddSessionPromptInputs1796150000000 implements MigrationInterface {
  name = 'AddSessionPromptInputs1796150000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "sessions" ADD "prompt_inputs" jsonb');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE "sessions" DROP COLUMN "prompt_inputs"');
  }
}
