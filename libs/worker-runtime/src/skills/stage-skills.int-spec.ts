import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Client as Minio } from 'minio';
import { Header } from 'tar';
import { ApiKeysService, digestCredential, generateCredential } from '@mango/feature-auth';
import { createDataSource } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import { answers, AppProcess, createTestDatabase, freePort, startApp, TestDatabase } from '@mango/testing';
import type { DataSource } from 'typeorm';
import { HttpSkillsApi } from './skills-client';
import { removeStagedSkills, SkillRetrievalError, SkillStagingError, stageSkills } from './stage-skills';

const WS = 'wrkspc_default';
const md = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n# ${name}\n`;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A gzip tar built header by header, so tests can make members the upload side never would. */
function craftTar(entries: Array<{ path: string; type?: string; body?: string; linkpath?: string }>): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.body ?? '');
    const type = e.type ?? 'File';
    const h = new Header({
      path: e.path,
      type: type as never,
      size: type === 'File' ? body.length : 0,
      mode: 0o644,
      mtime: new Date(0),
      linkpath: e.linkpath,
      uid: 0,
      gid: 0,
      devmaj: 0,
      devmin: 0,
    });
    const block = Buffer.alloc(512);
    h.encode(block, 0);
    blocks.push(block);
    if (type === 'File' && body.length) {
      blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

describe('Skill staging against a real apps/files process (PostgreSQL + S3)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let app: AppProcess;
  let url: string;
  let key: string;
  let minio: Minio;
  let work: string;
  const bucket = `mango-stage-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    db = await createTestDatabase('skillstage');
    ds = await createDataSource({ url: db.url, poolSize: 2 }).initialize();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    app = await startApp(
      'apps/files/src/main.ts',
      {
        MANGO_DATABASE_URL: db.url,
        MANGO_FILES_PORT: String(port),
        MANGO_S3_ENDPOINT: process.env.MANGO_S3_ENDPOINT!,
        MANGO_S3_ACCESS_KEY: process.env.MANGO_S3_ACCESS_KEY!,
        MANGO_S3_SECRET_KEY: process.env.MANGO_S3_SECRET_KEY!,
        MANGO_S3_REGION: process.env.MANGO_S3_REGION ?? 'us-east-1',
        MANGO_S3_BUCKET: bucket,
        MANGO_LOG_LEVEL: 'warn',
      },
      answers(`${url}/healthz`),
    );
    key = (await new ApiKeysService(ds).create({ workspaceId: WS, label: 't' })).api_key;
    const endpoint = new URL(process.env.MANGO_S3_ENDPOINT!);
    minio = new Minio({
      endPoint: endpoint.hostname,
      port: Number(endpoint.port),
      useSSL: endpoint.protocol === 'https:',
      accessKey: process.env.MANGO_S3_ACCESS_KEY!,
      secretKey: process.env.MANGO_S3_SECRET_KEY!,
      region: process.env.MANGO_S3_REGION ?? 'us-east-1',
    });
  });
  afterAll(async () => {
    await app.stop();
    await ds.destroy();
    await db.drop();
    const names: string[] = [];
    for await (const o of minio.listObjectsV2(bucket, '', true)) if (o.name) names.push(o.name);
    if (names.length) await minio.removeObjects(bucket, names);
    await minio.removeBucket(bucket);
  });
  beforeEach(async () => {
    work = await mkdtemp(join(tmpdir(), 'mango-workdir-'));
  });
  afterEach(async () => {
    await rm(work, { recursive: true, force: true });
  });

  const upload = async (files: Array<[string, string]>, skillId?: string): Promise<{ id: string }> => {
    const form = new FormData();
    for (const [p, c] of files) form.append('files[]', new Blob([c]), p);
    const res = await fetch(`${url}/v1/skills${skillId ? `/${skillId}/versions` : ''}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string };
  };

  /** A running Session pinning `pins` (and roster Agents pinning more), with a live Work token. */
  const session = async (
    pins: Array<{ skill_id: string; version: string }>,
    roster: Array<{ agent: string; pins: Array<{ skill_id: string; version: string }> }> = [],
  ) => {
    const env = newId('environment');
    await ds.query(
      `INSERT INTO environments (id, workspace_id, name, config, metadata, created_at, updated_at)
       VALUES ($1, $2, $1, '{"type":"self_hosted"}', '{}', now(), now())`,
      [env, WS],
    );
    for (const r of roster) {
      await ds.query(
        `INSERT INTO agents (id, workspace_id, current_version, created_at, updated_at) VALUES ($1, $2, 1, now(), now())`,
        [r.agent, WS],
      );
      await ds.query(
        `INSERT INTO agent_versions (agent_id, version, definition, created_at) VALUES ($1, 1, $2, now())`,
        [r.agent, JSON.stringify({ skills: r.pins.map((p) => ({ type: 'custom', ...p })) })],
      );
    }
    const sessionId = newId('session');
    const agent = {
      skills: pins.map((p) => ({ type: 'custom', ...p })),
      multiagent: roster.length
        ? { type: 'coordinator', agents: roster.map((r) => ({ type: 'agent', id: r.agent, version: 1 })) }
        : null,
    };
    await ds.query(
      `INSERT INTO sessions (id, workspace_id, environment_id, agent_id, agent_version, agent, status, metadata,
                             usage, last_seq, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 1, $5, 'running', '{}', '{}', 0, now(), now())`,
      [sessionId, WS, env, newId('agent'), JSON.stringify(agent)],
    );
    const token = generateCredential('workToken');
    const workId = newId('work');
    await ds.query(
      `INSERT INTO work_items (id, workspace_id, environment_id, kind, session_id, state, metadata, token_digest,
                               created_at, claimed_at, acknowledged_at, started_at, latest_heartbeat_at,
                               lease_expires_at, ttl_seconds)
       VALUES ($1, $2, $3, 'session', $4, 'active', '{}', $5, now(), now(), now(), now(), now(),
               now() + interval '5 minutes', 300)`,
      [workId, WS, env, sessionId, digestCredential(token)],
    );
    return { sessionId, workId, client: new HttpSkillsApi({ baseUrl: url, token }) };
  };

  /** Replaces a version's stored archive (and, with `refreeze`, its recorded length and digest). */
  const tamper = async (skillId: string, version: number, bytes: Buffer, refreeze: boolean) => {
    const [{ object_key }] = await ds.query(
      'SELECT object_key FROM skill_versions WHERE skill_id = $1 AND version = $2',
      [skillId, version],
    );
    await minio.putObject(bucket, object_key, bytes, bytes.length);
    if (refreeze)
      await ds.query(
        'UPDATE skill_versions SET archive_size_bytes = $3, archive_sha256 = $4 WHERE skill_id = $1 AND version = $2',
        [skillId, version, bytes.length, sha(bytes)],
      );
  };

  const tree = (dir: string): string[] => {
    const out: string[] = [];
    const walk = (d: string, rel: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(join(d, e.name), r);
        else out.push(`${r}${e.isFile() ? '' : ' (not a file)'}`);
      }
    };
    walk(dir, '');
    return out.sort();
  };

  it('stages every pinned version (primary and roster) as one fresh tree that replaces the prior one', async () => {
    const a = await upload([
      ['pdf/SKILL.md', md('pdf')],
      ['pdf/scripts/run.sh', 'echo v1'],
    ]);
    await upload(
      [
        ['pdf/SKILL.md', md('pdf')],
        ['pdf/scripts/run.sh', 'echo v2'],
      ],
      a.id,
    );
    const b = await upload([['xlsx/SKILL.md', md('xlsx')]]);
    const roster = newId('agent');
    const s = await session(
      [
        { skill_id: a.id, version: '1' },
        { skill_id: b.id, version: '1' },
      ],
      [{ agent: roster, pins: [{ skill_id: a.id, version: '2' }] }],
    );
    // What an earlier activation (or a tool) left: an old tree with a stale file.
    await mkdir(join(work, 'skills', 'old'), { recursive: true });
    await writeFile(join(work, 'skills', 'old', 'stale.txt'), 'stale');

    const result = await stageSkills({
      client: s.client,
      sessionId: s.sessionId,
      pins: [
        { skill_id: a.id, version: '1' },
        { skill_id: b.id, version: '1' },
        { skill_id: a.id, version: '1' },
        { skill_id: a.id, version: '2', agent_id: roster },
      ],
      root: work,
    });
    expect(result.dir).toBe(join(work, 'skills'));
    expect(result.skills.map((x) => [x.path, x.files])).toEqual([
      ['skills/pdf', 2],
      ['skills/xlsx', 1],
      [`skills/.agents/${roster}/pdf`, 2],
    ]);
    expect(tree(join(work, 'skills'))).toEqual([
      `.agents/${roster}/pdf/SKILL.md`,
      `.agents/${roster}/pdf/scripts/run.sh`,
      'pdf/SKILL.md',
      'pdf/scripts/run.sh',
      'xlsx/SKILL.md',
    ]);
    expect(readFileSync(join(work, 'skills/pdf/scripts/run.sh'), 'utf8')).toBe('echo v1');
    expect(readFileSync(join(work, `skills/.agents/${roster}/pdf/scripts/run.sh`), 'utf8')).toBe('echo v2');
    // Only the tree remains below the workdir: no staging directory, no downloaded archive.
    expect(readdirSync(work)).toEqual(['skills']);

    await removeStagedSkills(work);
    expect(readdirSync(work)).toEqual([]);
  });

  it('replaces a skills symlink left by a tool without following it', async () => {
    const a = await upload([['one/SKILL.md', md('one')]]);
    const s = await session([{ skill_id: a.id, version: '1' }]);
    const outside = await mkdtemp(join(tmpdir(), 'mango-outside-'));
    await writeFile(join(outside, 'keep.txt'), 'keep');
    await symlink(outside, join(work, 'skills'));
    await stageSkills({
      client: s.client,
      sessionId: s.sessionId,
      pins: [{ skill_id: a.id, version: '1' }],
      root: work,
    });
    expect(lstatSync(join(work, 'skills')).isDirectory()).toBe(true);
    expect(tree(join(work, 'skills'))).toEqual(['one/SKILL.md']);
    expect(await readFile(join(outside, 'keep.txt'), 'utf8')).toBe('keep');
    expect(readdirSync(outside)).toEqual(['keep.txt']);
    await rm(outside, { recursive: true });
  });

  describe('permanent validation failures (SkillStagingError) leave the prior tree and nothing else', () => {
    let skillId: string;
    beforeEach(async () => {
      skillId = (await upload([['p/SKILL.md', md('p')]])).id;
      await mkdir(join(work, 'skills', 'prior'), { recursive: true });
    });
    const expectPermanent = async (
      pins: Array<{ skill_id: string; version: string }>,
      message: RegExp,
      limits = {},
    ) => {
      const s = await session(pins);
      const err = await stageSkills({
        client: s.client,
        sessionId: s.sessionId,
        pins,
        root: work,
        limits,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SkillStagingError);
      expect((err as Error).message).toMatch(message);
      expect(readdirSync(work)).toEqual(['skills']);
      expect(readdirSync(join(work, 'skills'))).toEqual(['prior']);
    };

    it('a version the Session did not pin (404)', async () => {
      const s = await session([]);
      const err = await stageSkills({
        client: s.client,
        sessionId: s.sessionId,
        pins: [{ skill_id: skillId, version: '1' }],
        root: work,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SkillStagingError);
      expect((err as Error).message).toMatch(/not found/);
      expect(readdirSync(join(work, 'skills'))).toEqual(['prior']);
    });

    it('a pin that is not frozen (latest)', async () => {
      await expect(
        stageSkills({
          client: new HttpSkillsApi({ baseUrl: url, token: 'x' }),
          sessionId: 's',
          pins: [{ skill_id: skillId, version: 'latest' }],
          root: work,
        }),
      ).rejects.toThrow(SkillStagingError);
    });

    it('an archive whose bytes differ from the frozen digest (same length)', async () => {
      const [{ archive_size_bytes }] = await ds.query(
        'SELECT archive_size_bytes FROM skill_versions WHERE skill_id = $1',
        [skillId],
      );
      await tamper(skillId, 1, randomBytes(Number(archive_size_bytes)), false);
      await expectPermanent([{ skill_id: skillId, version: '1' }], /SHA-256/);
    });

    it('an archive longer than the frozen length', async () => {
      const [{ archive_size_bytes }] = await ds.query(
        'SELECT archive_size_bytes FROM skill_versions WHERE skill_id = $1',
        [skillId],
      );
      await tamper(skillId, 1, randomBytes(Number(archive_size_bytes) + 10), false);
      // apps/files serves Content-Length from the row; the stream is cut there, so the bytes differ instead.
      await expectPermanent([{ skill_id: skillId, version: '1' }], /SHA-256|longer/);
    });

    it.each([
      [
        'a symlink member',
        [
          { path: 'p/SKILL.md', body: md('p') },
          { path: 'p/link', type: 'SymbolicLink', linkpath: '/etc/passwd' },
        ],
        /SymbolicLink/,
      ],
      [
        'a hard link member',
        [
          { path: 'p/SKILL.md', body: md('p') },
          { path: 'p/hard', type: 'Link', linkpath: 'p/SKILL.md' },
        ],
        /Link/,
      ],
      [
        'a character device',
        [
          { path: 'p/SKILL.md', body: md('p') },
          { path: 'p/tty', type: 'CharacterDevice' },
        ],
        /CharacterDevice/,
      ],
      [
        'a FIFO',
        [
          { path: 'p/SKILL.md', body: md('p') },
          { path: 'p/fifo', type: 'FIFO' },
        ],
        /FIFO/,
      ],
      [
        'a ".." member',
        [
          { path: 'p/SKILL.md', body: md('p') },
          { path: 'p/../../escape', body: 'x' },
        ],
        /unsafe member/,
      ],
      ['an absolute member', [{ path: '/tmp/escape', body: 'x' }], /unsafe member/],
      [
        'a member outside the directory',
        [
          { path: 'p/SKILL.md', body: md('p') },
          { path: 'q/x', body: 'x' },
        ],
        /outside/,
      ],
      [
        'the same member twice',
        [
          { path: 'p/SKILL.md', body: md('p') },
          { path: 'p/SKILL.md', body: md('p') },
        ],
        /twice/,
      ],
    ])(
      'an archive with %s (digest re-frozen, so only the member check catches it)',
      async (_l, entries, message) => {
        await tamper(skillId, 1, craftTar(entries), true);
        await expectPermanent([{ skill_id: skillId, version: '1' }], message);
      },
    );

    it('bytes that are not a gzip tar', async () => {
      await tamper(skillId, 1, Buffer.from('not an archive at all'), true);
      await expectPermanent([{ skill_id: skillId, version: '1' }], /not a valid gzip tar/);
    });

    it.each([
      ['pins', { pins: 1 }, /at most 1/],
      ['files', { files: 1 }, /more than 1 files/],
      ['compressed bytes', { compressedBytes: 10 }, /compressed bytes/],
      ['expanded bytes', { expandedBytes: 10 }, /expanded bytes/],
    ])('a Session over the %s limit', async (_l, limits, message) => {
      const other = (await upload([['q/SKILL.md', md('q')]])).id;
      await expectPermanent(
        [
          { skill_id: skillId, version: '1' },
          { skill_id: other, version: '1' },
        ],
        message,
        limits,
      );
    });

    it('two pinned Skills with the same name', async () => {
      const twin = (await upload([['p/SKILL.md', md('p')]])).id;
      await expectPermanent(
        [
          { skill_id: skillId, version: '1' },
          { skill_id: twin, version: '1' },
        ],
        /both named "p"/,
      );
    });
  });

  describe('temporary retrieval failures (SkillRetrievalError) are retried, then left for reclaim', () => {
    it('an unreachable service, after the attempts', async () => {
      const port = await freePort();
      const err = await stageSkills({
        client: new HttpSkillsApi({ baseUrl: `http://127.0.0.1:${port}`, token: 'x' }),
        sessionId: 's',
        pins: [{ skill_id: newId('skill'), version: '1' }],
        root: work,
        attempts: 3,
        backoffBaseMs: 1,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SkillRetrievalError);
      expect((err as Error).message).toMatch(/after 3 attempts/);
      expect(existsSync(join(work, 'skills'))).toBe(false);
      expect(readdirSync(work)).toEqual([]);
    });

    it('a Work token whose lease ran out (401)', async () => {
      const skillId = (await upload([['p/SKILL.md', md('p')]])).id;
      const s = await session([{ skill_id: skillId, version: '1' }]);
      await ds.query(`UPDATE work_items SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [
        s.workId,
      ]);
      await expect(
        stageSkills({
          client: s.client,
          sessionId: s.sessionId,
          pins: [{ skill_id: skillId, version: '1' }],
          root: work,
        }),
      ).rejects.toThrow(SkillRetrievalError);
      expect(readdirSync(work)).toEqual([]);
    });
  });
});
