import { lstat, readdir, rm } from 'node:fs/promises';

import type Docker from 'dockerode';
import {
  LABEL_ENVIRONMENT,
  LABEL_SESSION,
  SESSION_ID,
  SESSION_VOLUME_PREFIX,
  sessionVolume,
  sessionWorkspaceDir,
} from './item-launcher';

/** One Session workspace on this Docker host: a named volume, or a directory under the workspace root. */
export interface SessionWorkspace {
  kind: 'volume' | 'directory';
  /** The volume name, or the directory's host path. */
  name: string;
  sessionId: string;
  /** From the volume's label; null for directories and for volumes made before volumes were labelled. */
  environmentId: string | null;
  /** A container (running or not) still mounts it, or serves its Session: never removed. */
  inUse: boolean;
}

/**
 * Every Session workspace this engine (and the workspace root, when given) holds. Volume names and
 * directory names that are not exactly a Session id are not Mango's and are never listed.
 */
export async function listSessionWorkspaces(
  docker: Docker,
  workspaceRoot?: string,
): Promise<SessionWorkspace[]> {
  const found: SessionWorkspace[] = [];
  const { Volumes } = await docker.listVolumes({ filters: { name: [SESSION_VOLUME_PREFIX] } });
  for (const v of Volumes ?? []) {
    if (!v.Name.startsWith(SESSION_VOLUME_PREFIX)) continue;
    const labelled = v.Labels?.[LABEL_SESSION];
    const fromName = `sesn_${v.Name.slice(SESSION_VOLUME_PREFIX.length + 'sesn_'.length).toUpperCase()}`;
    const sessionId = labelled && SESSION_ID.test(labelled) ? labelled : fromName;
    if (!SESSION_ID.test(sessionId) || sessionVolume(sessionId) !== v.Name) continue;
    const users = await docker.listContainers({ all: true, filters: { volume: [v.Name] } });
    found.push({
      kind: 'volume',
      name: v.Name,
      sessionId,
      environmentId: v.Labels?.[LABEL_ENVIRONMENT] ?? null,
      inUse: users.length > 0,
    });
  }
  if (workspaceRoot) {
    for (const entry of await readdir(workspaceRoot)) {
      if (!SESSION_ID.test(entry)) continue;
      const path = sessionWorkspaceDir(workspaceRoot, entry);
      const st = await lstat(path);
      if (!st.isDirectory()) continue;
      const users = await docker.listContainers({
        all: true,
        filters: { label: [`${LABEL_SESSION}=${entry}`] },
      });
      found.push({
        kind: 'directory',
        name: path,
        sessionId: entry,
        environmentId: null,
        inUse: users.length > 0,
      });
    }
  }
  return found.sort((a, b) => a.sessionId.localeCompare(b.sessionId) || a.kind.localeCompare(b.kind));
}

/** Removes one Session workspace (a volume still in use is refused by the engine itself). */
export async function removeSessionWorkspace(docker: Docker, ws: SessionWorkspace): Promise<void> {
  if (ws.kind === 'volume') {
    await docker.getVolume(ws.name).remove();
    return;
  }
  // Re-derive the path from the id: only ever <root>/<session id>, never a followed link.
  const root = ws.name.slice(0, -ws.sessionId.length - 1);
  const path = sessionWorkspaceDir(root, ws.sessionId);
  const st = await lstat(path);
  if (!st.isDirectory()) throw new Error(`${path} is not a directory; not removing it`);
  await rm(path, { recursive: true, force: true });
}

/** The Session workspaces of one Session (its volume and/or its directory). */
export async function sessionWorkspacesOf(docker: Docker, sessionId: string, workspaceRoot?: string) {
  return (await listSessionWorkspaces(docker, workspaceRoot)).filter((w) => w.sessionId === sessionId);
}
