import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ObjectStore } from '@mango/adapter-object-store';
import { decodeWorkSecret } from '@mango/feature-work';
import { answers, ApiUnderTest, freePort, httpClient, startApi, startApp, AppProcess } from '@mango/testing';
import { stageSessionSkills } from '@mango/worker-runtime';
import { sendBundle, skillMd } from './skills-support';

/**
 * The whole Skill path over real processes on one database and one bucket: a Skill uploaded to
 * apps/files, pinned by an Agent in apps/api (`latest`), frozen to its concrete version by Session
 * create, read with the Session's Work token (from a real Poll → Ack → Heartbeat) exactly as pinned, and
 * staged by the worker-side `stageSkills`.
 */
describe('Skills from upload to worker staging (real apps/api + apps/files, PostgreSQL, S3)', () => {
  let api: ApiUnderTest;
  let files: AppProcess;
  let filesUrl: string;
  let work: string;
  const bucket = `mango-skillsession-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    api = await startApi('skillsession');
    const port = await freePort();
    filesUrl = `http://127.0.0.1:${port}`;
    files = await startApp(
      'apps/files/src/main.ts',
      {
        MANGO_DATABASE_URL: api.db.url,
        MANGO_FILES_PORT: String(port),
        MANGO_S3_ENDPOINT: process.env.MANGO_S3_ENDPOINT!,
        MANGO_S3_ACCESS_KEY: process.env.MANGO_S3_ACCESS_KEY!,
        MANGO_S3_SECRET_KEY: process.env.MANGO_S3_SECRET_KEY!,
        MANGO_S3_REGION: process.env.MANGO_S3_REGION ?? 'us-east-1',
        MANGO_S3_BUCKET: bucket,
        MANGO_LOG_LEVEL: 'warn',
      },
      answers(`${filesUrl}/healthz`),
    );
    work = await mkdtemp(join(tmpdir(), 'mango-skillsession-'));
  });
  afterAll(async () => {
    await files.stop();
    await api.close();
    const store = new ObjectStore({
      endpoint: process.env.MANGO_S3_ENDPOINT!,
      accessKey: process.env.MANGO_S3_ACCESS_KEY!,
      secretKey: process.env.MANGO_S3_SECRET_KEY!,
      region: process.env.MANGO_S3_REGION ?? 'us-east-1',
      bucket,
    });
    const names: string[] = [];
    for await (const o of store.client.listObjectsV2(bucket, '', true)) if (o.name) names.push(o.name);
    if (names.length) await store.client.removeObjects(bucket, names);
    await store.client.removeBucket(bucket);
    await rm(work, { recursive: true, force: true });
  });

  it('pins latest, freezes it at Session create, lets the Work token read exactly that version, and stages it', async () => {
    const key = (await api.issueKey('wrkspc_default')).api_key;
    const ws = httpClient(api.url, key);
    const skill = await sendBundle(filesUrl, key, [
      ['notes/SKILL.md', skillMd('notes', 'Takes notes.')],
      ['notes/how.md', 'v1'],
    ]);
    expect(skill.status).toBe(201);
    const agent = await ws.post('/v1/agents', {
      name: 'a',
      model: 'm',
      tools: [{ type: 'agent_toolset_20260401' }],
      skills: [{ type: 'custom', skill_id: skill.body.id }],
    });
    expect(agent.status).toBe(201);
    const envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
    const session = await ws.post('/v1/sessions', {
      agent: agent.body.id,
      environment_id: envId,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(session.status).toBe(201);
    expect(session.body.agent.skills).toEqual([{ type: 'custom', skill_id: skill.body.id, version: '1' }]);
    // A later version does not change what the Session runs.
    const v2 = await sendBundle(
      filesUrl,
      key,
      [
        ['notes/SKILL.md', skillMd('notes', 'Takes notes.')],
        ['notes/how.md', 'v2'],
      ],
      { skillId: skill.body.id },
    );
    expect(v2.body.version).toBe('2');

    // The supervisor's Poll → Ack, the worker's first heartbeat: the Work token is live.
    const sup = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
    const polled = await sup.get(`/v1/environments/${envId}/work/poll`);
    expect(polled.body.data).toEqual({ type: 'session', id: session.body.id });
    const token = decodeWorkSecret(polled.body.secret).sessions_token;
    expect((await sup.post(`/v1/environments/${envId}/work/${polled.body.id}/ack`)).status).toBe(200);
    const worker = httpClient(api.url, token);
    const hb = await worker.post(
      `/v1/environments/${envId}/work/${polled.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
    );
    expect(hb.status).toBe(200);

    // The worker reads its Session (API) and exactly its pinned version (apps/files).
    const pins = (await worker.get(`/v1/sessions/${session.body.id}`)).body.agent.skills;
    const onFiles = httpClient(filesUrl, token);
    expect((await onFiles.get(`/v1/skills/${skill.body.id}/versions/1`)).status).toBe(200);
    expect((await onFiles.get(`/v1/skills/${skill.body.id}/versions/2`)).status).toBe(404);
    expect((await onFiles.get(`/v1/skills/${skill.body.id}`)).status).toBe(403);

    const session2 = (await worker.get(`/v1/sessions/${session.body.id}`)).body;
    const { staged, dispose } = await stageSessionSkills({
      session: session2,
      workdir: work,
      baseUrl: filesUrl,
      token,
    });
    expect(staged).toEqual([
      expect.objectContaining({
        skill_id: skill.body.id,
        version: '1',
        name: 'notes',
        path: 'skills/notes',
        files: 2,
      }),
    ]);
    expect(pins).toEqual(session2.agent.skills);
    expect(readFileSync(join(work, 'skills/notes/how.md'), 'utf8')).toBe('v1');
    await dispose();
    expect(existsSync(join(work, 'skills'))).toBe(false);

    // Once the Work stops, the token reads nothing.
    await httpClient(api.url, key).post(`/v1/environments/${envId}/work/${polled.body.id}/stop`, {
      force: true,
    });
    expect((await onFiles.get(`/v1/skills/${skill.body.id}/versions/1`)).status).toBe(401);
  });

  it("freezes a roster Agent's definition and `latest` Skill pins into the Session; the token reads and stages exactly them", async () => {
    const key = (await api.issueKey('wrkspc_default')).api_key;
    const ws = httpClient(api.url, key);
    const helper = await sendBundle(filesUrl, key, [
      ['helper/SKILL.md', skillMd('helper', 'Helps.')],
      ['helper/a.md', 'h1'],
    ]);
    expect(helper.status).toBe(201);
    const toolset = {
      type: 'agent_toolset_20260401',
      default_config: { permission_policy: { type: 'always_allow' } },
    };
    const member = (
      await ws.post('/v1/agents', {
        name: 'member',
        model: 'm',
        system: 'I help.',
        tools: [toolset],
        skills: [{ type: 'custom', skill_id: helper.body.id }],
      })
    ).body;
    const lead = (
      await ws.post('/v1/agents', {
        name: 'lead',
        model: 'm',
        tools: [toolset],
        multiagent: {
          type: 'coordinator',
          agents: [member.id, { type: 'self' }, { type: 'advisor', model: 'big' }],
        },
      })
    ).body;
    const envId = (await ws.post('/v1/environments', { name: `roster-${Date.now()}` })).body.id;
    const session = await ws.post('/v1/sessions', {
      agent: lead.id,
      environment_id: envId,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }],
    });
    expect(session.status).toBe(201);
    const [frozenMember, frozenSelf, advisor] = session.body.agent.multiagent.agents;
    expect(frozenMember).toMatchObject({
      id: member.id,
      type: 'agent',
      version: 1,
      name: 'member',
      system: 'I help.',
      skills: [{ type: 'custom', skill_id: helper.body.id, version: '1' }],
    });
    expect(frozenMember).not.toHaveProperty('multiagent');
    expect(frozenSelf).toMatchObject({ id: lead.id, name: 'lead' });
    expect(advisor).toEqual({ type: 'advisor', model: 'big' });
    // A newer version of the Skill changes nothing for this Session.
    await sendBundle(
      filesUrl,
      key,
      [
        ['helper/SKILL.md', skillMd('helper', 'Helps.')],
        ['helper/a.md', 'h2'],
      ],
      {
        skillId: helper.body.id,
      },
    );

    const sup = httpClient(api.url, (await api.issueKey('wrkspc_default', envId)).api_key);
    const polled = await sup.get(`/v1/environments/${envId}/work/poll`);
    const token = decodeWorkSecret(polled.body.secret).sessions_token;
    await sup.post(`/v1/environments/${envId}/work/${polled.body.id}/ack`);
    await httpClient(api.url, token).post(
      `/v1/environments/${envId}/work/${polled.body.id}/heartbeat?expected_last_heartbeat=NO_HEARTBEAT`,
    );
    const onFiles = httpClient(filesUrl, token);
    expect((await onFiles.get(`/v1/skills/${helper.body.id}/versions/1`)).status).toBe(200);
    expect((await onFiles.get(`/v1/skills/${helper.body.id}/versions/2`)).status).toBe(404);
    const snapshot = (await httpClient(api.url, token).get(`/v1/sessions/${session.body.id}`)).body;
    const { staged, dispose } = await stageSessionSkills({
      session: snapshot,
      workdir: work,
      baseUrl: filesUrl,
      token,
    });
    expect(staged).toEqual([
      expect.objectContaining({
        skill_id: helper.body.id,
        version: '1',
        path: `skills/.agents/${member.id}/helper`,
      }),
    ]);
    expect(readFileSync(join(work, `skills/.agents/${member.id}/helper/a.md`), 'utf8')).toBe('h1');
    await dispose();
    await ws.post(`/v1/environments/${envId}/work/${polled.body.id}/stop`, { force: true });
  });
});
