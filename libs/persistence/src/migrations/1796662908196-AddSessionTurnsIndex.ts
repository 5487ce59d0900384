import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The running-Sessions limit (fair use) counts a Workspace's Sessions with a turn under way at every turn
 * start (`SessionRepository.lockAndCountTurns`): this partial index holds only those rows, so the count
 * costs what is running, not every Session the Workspace ever had (`sessions_workspace_idx` would read
 * them all, and their rows, to check the status).
 */
export class AddSessionTurnsIndex1796662908196 implements MigrationInterface {
  name = 'AddSessionTurnsIndex1796662908196';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(
      'CREATE INDEX "sessions_workspace_turns_idx" ON "sessions" ("workspace_id") WHERE status IN (\'running\', \'rescheduling\') AND deleted_at IS NULL',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP INDEX "public"."sessions_workspace_turns_idx"');
  }
}
