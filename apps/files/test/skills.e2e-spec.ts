import { httpClient } from '@mango/testing';
import { FilesUnderTest, startFiles } from './support';
import {
  bundle,
  downloadArchive,
  readArchive,
  sendBundle,
  sessionWithPins,
  sha256,
  skillMd,
  storedSkills,
} from './skills-support';

describe('Skills (real apps/files process, PostgreSQL and S3)', () => {
  let files: FilesUnderTest;
  let key: string;
  beforeAll(async () => {
    files = await startFiles('skills');
    key = (await files.issueKey('wrkspc_default')).api_key;
  });
  afterAll(async () => {
    if (process.env.SKILLS_DEBUG) console.log(files.app.logs());
    await files.close();
  });

  it('creates a Skill with version 1, stores one verifiable archive, adds and deletes versions, deletes the Skill', async () => {
    const http = httpClient(files.url, key);
    const created = await sendBundle(files.url, key, bundle(), { displayTitle: 'PDF tools' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      type: 'skill',
      display_title: 'PDF tools',
      latest_version: '1',
      source: 'custom',
    });
    const id: string = created.body.id;
    expect(id).toMatch(/^skill_/);
    expect((await http.get(`/v1/skills/${id}`)).body).toEqual(created.body);
    expect((await http.get('/v1/skills')).body.data.map((s: any) => s.id)).toEqual([id]);

    const v1 = await http.get(`/v1/skills/${id}/versions/1`);
    expect(v1.status).toBe(200);
    expect(v1.body).toMatchObject({
      id: '1',
      type: 'skill_version',
      skill_id: id,
      version: '1',
      name: 'pdf-tools',
      description: 'Works with PDF files.',
      directory: 'pdf-tools',
      file_count: 3,
    });
    const expanded = bundle().reduce((n, [, c]) => n + Buffer.byteLength(c), 0);
    expect(v1.body.expanded_size_bytes).toBe(expanded);

    const archive = await downloadArchive(files.url, key, id, '1');
    expect(archive.status).toBe(200);
    expect(archive.headers.get('content-type')).toBe('application/gzip');
    expect(archive.bytes.length).toBe(v1.body.archive_size_bytes);
    expect(sha256(archive.bytes)).toBe(v1.body.archive_sha256);
    const members = await readArchive(archive.bytes);
    expect(members).toEqual(
      bundle()
        .map(([path, content]) => ({ path, type: 'File', content: content.toString() }))
        .sort((a, b) => a.path.localeCompare(b.path)),
    );

    const v2 = await sendBundle(
      files.url,
      key,
      [
        ['renamed/SKILL.md', skillMd('pdf-tools-two', 'Second take.')],
        ['renamed/a.txt', 'a'],
      ],
      { skillId: id },
    );
    expect(v2.status).toBe(201);
    expect(v2.body).toMatchObject({
      id: '2',
      version: '2',
      name: 'pdf-tools-two',
      directory: 'renamed',
      file_count: 2,
    });
    expect((await http.get(`/v1/skills/${id}`)).body.latest_version).toBe('2');
    const page1 = await http.get(`/v1/skills/${id}/versions?limit=1`);
    expect(page1.body.data.map((v: any) => v.version)).toEqual(['2']);
    const page2 = await http.get(`/v1/skills/${id}/versions?limit=1&page=${page1.body.next_page}`);
    expect(page2.body).toMatchObject({ next_page: null });
    expect(page2.body.data.map((v: any) => v.version)).toEqual(['1']);

    // Immutable: version 1's archive is unchanged by version 2.
    expect(sha256((await downloadArchive(files.url, key, id, '1')).bytes)).toBe(v1.body.archive_sha256);

    expect((await http.delete(`/v1/skills/${id}/versions/2`)).body).toEqual({
      id: '2',
      type: 'skill_version_deleted',
    });
    expect((await http.get(`/v1/skills/${id}`)).body.latest_version).toBe('1');
    expect((await http.get(`/v1/skills/${id}/versions/2`)).status).toBe(404);
    expect((await downloadArchive(files.url, key, id, '2')).status).toBe(404);
    // Version numbers are never reused.
    const v3 = await sendBundle(files.url, key, bundle(), { skillId: id });
    expect(v3.body.version).toBe('3');
    expect((await storedSkills(files)).objects).toHaveLength(2);

    expect((await http.delete(`/v1/skills/${id}`)).body).toEqual({ id, type: 'skill_deleted' });
    expect((await http.get(`/v1/skills/${id}`)).status).toBe(404);
    expect((await http.get(`/v1/skills/${id}/versions/1`)).status).toBe(404);
    expect((await downloadArchive(files.url, key, id, '1')).status).toBe(404);
    expect(await storedSkills(files)).toEqual({
      skills: 0,
      versions: 0,
      cleanups: 0,
      objects: [],
      incomplete: [],
    });
  });

  it.each([
    ['GET', '/v1/skills/agent_01JD2Y3QX9V5M8K7R6T4W2P0AB'],
    ['GET', '/v1/skills/skill_01JD2Y3QX9V5M8K7R6T4W2P0AB'],
    ['DELETE', '/v1/skills/skill_01JD2Y3QX9V5M8K7R6T4W2P0AB'],
    ['GET', '/v1/skills/skill_01JD2Y3QX9V5M8K7R6T4W2P0AB/versions'],
    ['GET', '/v1/skills/skill_01JD2Y3QX9V5M8K7R6T4W2P0AB/versions/1'],
    ['DELETE', '/v1/skills/skill_01JD2Y3QX9V5M8K7R6T4W2P0AB/versions/1'],
  ])('%s %s (wrong prefix or unknown Skill) is 404', async (method, path) => {
    const res = await httpClient(files.url, key).request(method, path);
    expect([res.status, res.body.error.type]).toEqual([404, 'not_found_error']);
  });

  it('a version that is not a number (latest, 0, 01) is 404', async () => {
    const id = (await sendBundle(files.url, key, bundle())).body.id;
    const http = httpClient(files.url, key);
    for (const v of ['latest', '0', '01', '1.0', '-1'])
      expect([v, (await http.get(`/v1/skills/${id}/versions/${v}`)).status]).toEqual([v, 404]);
    await http.delete(`/v1/skills/${id}`);
  });

  it("another Workspace's Skill is 404 for every operation and absent from its list; nothing changes", async () => {
    const id = (await sendBundle(files.url, key, bundle())).body.id;
    const other = (await files.issueKey(await files.createWorkspace())).api_key;
    const http = httpClient(files.url, other);
    for (const [method, path] of [
      ['GET', `/v1/skills/${id}`],
      ['GET', `/v1/skills/${id}/versions`],
      ['GET', `/v1/skills/${id}/versions/1`],
      ['DELETE', `/v1/skills/${id}/versions/1`],
      ['DELETE', `/v1/skills/${id}`],
    ]) {
      const res = await http.request(method!, path!);
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    expect((await downloadArchive(files.url, other, id, '1')).status).toBe(404);
    expect((await sendBundle(files.url, other, bundle(), { skillId: id })).status).toBe(404);
    expect((await http.get('/v1/skills')).body.data).toEqual([]);
    const before = await storedSkills(files);
    expect(before.versions).toBe(1);
    expect((await httpClient(files.url, key).get(`/v1/skills/${id}`)).body.latest_version).toBe('1');
    await httpClient(files.url, key).delete(`/v1/skills/${id}`);
  });

  describe('credentials', () => {
    let id: string;
    beforeAll(async () => {
      id = (await sendBundle(files.url, key, bundle())).body.id;
      const v2 = await sendBundle(files.url, key, bundle(), { skillId: id });
      if (v2.status !== 201) throw new Error(`version 2 was not created: ${v2.status}`);
    });
    afterAll(async () => {
      await httpClient(files.url, key).delete(`/v1/skills/${id}`);
    });
    const routes = (): Array<[string, string]> => [
      ['GET', '/v1/skills'],
      ['GET', `/v1/skills/${id}`],
      ['GET', `/v1/skills/${id}/versions`],
      ['GET', `/v1/skills/${id}/versions/1`],
      ['GET', `/v1/skills/${id}/versions/1/content`],
      ['DELETE', `/v1/skills/${id}/versions/2`],
      ['DELETE', `/v1/skills/${id}`],
    ];

    it('an Environment key is 403 everywhere, uploads included, and changes nothing', async () => {
      const envKey = (await files.issueKey('wrkspc_default', await files.createEnvironment('wrkspc_default')))
        .api_key;
      const before = await storedSkills(files);
      expect((await sendBundle(files.url, envKey, bundle())).status).toBe(403);
      expect((await sendBundle(files.url, envKey, bundle(), { skillId: id })).status).toBe(403);
      for (const [method, path] of routes()) {
        const res = await httpClient(files.url, envKey).request(method, path);
        expect([method, path, res.status]).toEqual([method, path, 403]);
      }
      expect(await storedSkills(files)).toEqual(before);
    });

    it("a Session's Work token reads exactly its pinned versions (metadata and archive); everything else is 404 or 403", async () => {
      const other = (await sendBundle(files.url, key, bundle('other'))).body.id;
      const { token } = await sessionWithPins(files, 'wrkspc_default', [{ skill_id: id, version: '1' }]);
      const http = httpClient(files.url, token);
      const meta = await http.get(`/v1/skills/${id}/versions/1`);
      expect(meta.status).toBe(200);
      const archive = await downloadArchive(files.url, token, id, '1');
      expect(archive.status).toBe(200);
      expect(sha256(archive.bytes)).toBe(meta.body.archive_sha256);
      // Version 2 of the same Skill exists but is not pinned; the other Skill is not pinned at all.
      expect((await http.get(`/v1/skills/${id}/versions/2`)).status).toBe(404);
      expect((await downloadArchive(files.url, token, id, '2')).status).toBe(404);
      expect((await http.get(`/v1/skills/${other}/versions/1`)).status).toBe(404);
      expect((await downloadArchive(files.url, token, other, '1')).status).toBe(404);
      // Workspace-only routes: a live Work token is 403, and cannot upload.
      for (const [method, path] of routes().filter(
        ([, p]) => !p.endsWith('/versions/1') && !p.endsWith('/content'),
      )) {
        const res = await http.request(method, path);
        expect([method, path, res.status, res.body.error.type]).toEqual([
          method,
          path,
          403,
          'permission_error',
        ]);
      }
      expect((await sendBundle(files.url, token, bundle())).status).toBe(403);
      await httpClient(files.url, key).delete(`/v1/skills/${other}`);
    });

    it("a roster Agent's pinned version is readable by the Session's Work token too", async () => {
      const { token } = await sessionWithPins(
        files,
        'wrkspc_default',
        [],
        [[{ skill_id: id, version: '2' }]],
      );
      expect((await httpClient(files.url, token).get(`/v1/skills/${id}/versions/2`)).status).toBe(200);
      expect((await httpClient(files.url, token).get(`/v1/skills/${id}/versions/1`)).status).toBe(404);
    });

    it('a Work token whose lease ran out is 401, and one of another Workspace is 404', async () => {
      const { token, workId } = await sessionWithPins(files, 'wrkspc_default', [
        { skill_id: id, version: '1' },
      ]);
      await files.sql(`UPDATE work_items SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [
        workId,
      ]);
      const dead = await httpClient(files.url, token).get(`/v1/skills/${id}/versions/1`);
      expect([dead.status, dead.body.error.type]).toEqual([401, 'authentication_error']);
      expect((await downloadArchive(files.url, token, id, '1')).status).toBe(401);
      const ws = await files.createWorkspace();
      const foreign = await sessionWithPins(files, ws, [{ skill_id: id, version: '1' }]);
      expect((await httpClient(files.url, foreign.token).get(`/v1/skills/${id}/versions/1`)).status).toBe(
        404,
      );
      expect((await downloadArchive(files.url, foreign.token, id, '1')).status).toBe(404);
    });

    it('a healthcheck Work token is 403 on Skill versions', async () => {
      const token = await files.createWorkToken(
        'wrkspc_default',
        await files.createEnvironment('wrkspc_default'),
      );
      expect((await httpClient(files.url, token).get(`/v1/skills/${id}/versions/1`)).status).toBe(403);
    });
  });
});
