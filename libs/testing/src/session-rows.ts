import { insertRow, SessionEntity, SessionThreadRepository } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import type { DataSource } from 'typeorm';

/** A Workspace and an Environment row for tests that write Sessions straight to the database. */
export async function insertWorkspaceAndEnvironment(
  ds: DataSource,
): Promise<{ workspaceId: string; environmentId: string }> {
  const workspaceId = newId('workspace');
  const environmentId = newId('environment');
  await ds.query(`INSERT INTO workspaces (id, name) VALUES ($1, 'w')`, [workspaceId]);
  await ds.query(
    `INSERT INTO environments (id, workspace_id, name, config, metadata, created_at, updated_at)
     VALUES ($1, $2, 'e', '{}', '{}', now(), now())`,
    [environmentId, workspaceId],
  );
  return { workspaceId, environmentId };
}

/**
 * A Session row (idle, empty log) and its primary Thread in one transaction, as Session create writes
 * them, in that Workspace and Environment; `fields` override the defaults.
 */
export async function insertSessionRow(
  ds: DataSource,
  owner: { workspaceId: string; environmentId: string },
  fields: Partial<SessionEntity> = {},
): Promise<string> {
  const now = new Date();
  const id = fields.id ?? newId('session');
  await ds.transaction(async (tx) => {
    const session = tx.create(SessionEntity, {
      id,
      workspaceId: owner.workspaceId,
      environmentId: owner.environmentId,
      agentId: newId('agent'),
      agentVersion: 1,
      deploymentId: null,
      agent: {},
      title: null,
      status: 'idle',
      metadata: {},
      budget: null,
      vaultIds: [],
      usage: {},
      lastSeq: '0',
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
      deletedAt: null,
      ...fields,
    } as never);
    await insertRow(tx, SessionEntity, session);
    await new SessionThreadRepository(ds).createPrimary(tx, session);
  });
  return id;
}
