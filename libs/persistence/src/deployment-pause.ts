import type { EntityManager } from 'typeorm';

/**
 * Pauses the active Deployments matched by `where` (parameters from $1) with an error reason and
 * returns their ids and workspaces. TypeORM returns `[rows, count]` for an UPDATE … RETURNING.
 */
export async function pauseActiveDeployments(
  tx: EntityManager,
  where: string,
  params: unknown[],
  type: string,
  now: Date,
): Promise<Array<{ id: string; workspace_id: string }>> {
  const n = params.length;
  const res: unknown = await tx.query(
    `UPDATE deployments SET status = 'paused', paused_reason = $${n + 1}, updated_at = $${n + 2}
      WHERE ${where} AND status = 'active' AND archived_at IS NULL RETURNING id, workspace_id`,
    [...params, JSON.stringify({ type: 'error', error: { type } }), now],
  );
  const rows = Array.isArray(res) && Array.isArray(res[0]) ? res[0] : res;
  return rows as Array<{ id: string; workspace_id: string }>;
}
