import { createHash } from 'node:crypto';
import { digestCredential, generateCredential } from '@mango/feature-auth';
import { newId } from '@mango/platform-ids';
import { assertMatchesContract } from '@mango/testing';
import { Parser, ReadEntry } from 'tar';
import type { FilesUnderTest } from './support';

export type Bundle = Array<[path: string, content: string | Buffer]>;

export const skillMd = (name = 'pdf-tools', description = 'Works with PDF files.') =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nUse scripts/run.sh.\n`;

export const bundle = (top = 'pdf-tools', extra: Bundle = []): Bundle => [
  [`${top}/SKILL.md`, skillMd()],
  [`${top}/scripts/run.sh`, '#!/bin/sh\necho hi\n'],
  [`${top}/reference/notes.md`, 'ünïcödé notes\n'],
  ...extra,
];

/** POST a bundle as multipart `files[]` parts (filenames are the paths); checked against the contract. */
export async function sendBundle(
  url: string,
  credential: string,
  files: Bundle,
  opts: { skillId?: string; displayTitle?: string; field?: string } = {},
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  if (opts.displayTitle !== undefined) form.append('display_title', opts.displayTitle);
  for (const [path, content] of files)
    form.append(opts.field ?? 'files[]', new Blob([content], { type: 'application/octet-stream' }), path);
  return sendSkillForm(url, credential, form, opts.skillId);
}

export async function sendSkillForm(
  url: string,
  credential: string,
  form: FormData | { contentType: string; body: Buffer },
  skillId?: string,
): Promise<{ status: number; body: any }> {
  const path = skillId ? `/v1/skills/${skillId}/versions` : '/v1/skills';
  const res = await fetch(url + path, {
    method: 'POST',
    headers:
      form instanceof FormData
        ? { authorization: `Bearer ${credential}` }
        : { authorization: `Bearer ${credential}`, 'content-type': form.contentType },
    body: form instanceof FormData ? form : form.body,
  });
  const body = await res.json();
  assertMatchesContract('POST', skillId ? '/v1/skills/{skill_id}/versions' : '/v1/skills', res.status, body);
  return { status: res.status, body };
}

export async function downloadArchive(
  url: string,
  credential: string,
  skillId: string,
  version: string,
): Promise<{ status: number; bytes: Buffer; headers: Headers; body?: any }> {
  const res = await fetch(`${url}/v1/skills/${skillId}/versions/${version}/content`, {
    headers: { authorization: `Bearer ${credential}` },
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  if (res.status === 200) return { status: 200, bytes, headers: res.headers };
  const body = JSON.parse(bytes.toString('utf8'));
  assertMatchesContract('GET', '/v1/skills/{skill_id}/versions/{version}/content', res.status, body);
  return { status: res.status, bytes, headers: res.headers, body };
}

/** Every member of a gzip tar: path, type and bytes. */
export async function readArchive(
  bytes: Buffer,
): Promise<Array<{ path: string; type: string; content: string }>> {
  const out: Array<{ path: string; type: string; content: string }> = [];
  await new Promise<void>((resolve, reject) => {
    const parser = new Parser({
      onReadEntry: (entry: ReadEntry) => {
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () =>
          out.push({ path: entry.path, type: entry.type, content: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    });
    parser.on('end', () => resolve());
    parser.on('error', reject);
    parser.end(bytes);
  });
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Skill rows, version rows, cleanup rows, objects and unfinished uploads, for "nothing stored" checks. */
export async function storedSkills(files: FilesUnderTest) {
  const [{ skills }] = await files.sql<{ skills: number }>('SELECT count(*)::int AS skills FROM skills');
  const [{ versions }] = await files.sql<{ versions: number }>(
    'SELECT count(*)::int AS versions FROM skill_versions',
  );
  const [{ cleanups }] = await files.sql<{ cleanups: number }>(
    'SELECT count(*)::int AS cleanups FROM object_cleanups',
  );
  return {
    skills,
    versions,
    cleanups,
    objects: (await files.objectKeys()).filter((k) => k.includes('/skills/')),
    incomplete: await files.incompleteUploads(),
  };
}

/**
 * A Session (inserted directly) whose frozen Agent snapshot pins `pins`, with a live Work item and
 * its token. `roster` adds roster Agent versions whose definitions pin further Skills.
 */
export async function sessionWithPins(
  files: FilesUnderTest,
  workspaceId: string,
  pins: Array<{ skill_id: string; version: string }>,
  roster: Array<Array<{ skill_id: string; version: string }>> = [],
): Promise<{ sessionId: string; workId: string; token: string }> {
  const env = await files.createEnvironment(workspaceId);
  const rosterEntries: Array<{ type: 'agent'; id: string; version: number }> = [];
  for (const skills of roster) {
    const agentId = newId('agent');
    await files.sql(
      `INSERT INTO agents (id, workspace_id, current_version, created_at, updated_at) VALUES ($1, $2, 1, now(), now())`,
      [agentId, workspaceId],
    );
    await files.sql(
      `INSERT INTO agent_versions (agent_id, version, definition, created_at) VALUES ($1, 1, $2, now())`,
      [agentId, JSON.stringify({ skills: skills.map((s) => ({ type: 'custom', ...s })) })],
    );
    rosterEntries.push({ type: 'agent', id: agentId, version: 1 });
  }
  const sessionId = newId('session');
  const agent = {
    id: newId('agent'),
    type: 'agent',
    version: 1,
    skills: pins.map((p) => ({ type: 'custom', ...p })),
    multiagent: rosterEntries.length ? { type: 'coordinator', agents: rosterEntries } : null,
  };
  await files.sql(
    `INSERT INTO sessions (id, workspace_id, environment_id, agent_id, agent_version, agent, status, metadata,
                           usage, last_seq, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 1, $5, 'running', '{}', '{}', 0, now(), now())`,
    [sessionId, workspaceId, env, agent.id, JSON.stringify(agent)],
  );
  const token = generateCredential('workToken');
  const workId = newId('work');
  await files.sql(
    `INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, token_digest,
                             created_at, claimed_at, acknowledged_at, started_at, latest_heartbeat_at,
                             lease_expires_at, ttl_seconds)
     VALUES ($1, $2, $3, 'session', $4, 'active', '{}', $5, now(), now(), now(), now(), now(),
             now() + interval '5 minutes', 300)`,
    [workId, workspaceId, env, sessionId, digestCredential(token)],
  );
  return { sessionId, workId, token };
}
