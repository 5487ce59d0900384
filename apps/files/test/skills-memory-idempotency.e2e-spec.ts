import { assertMatchesContract } from '@mango/testing';
import { bundle, skillMd } from './skills-support';
import { FilesUnderTest, startFiles } from './support';

/**
 * `Idempotency-Key` on Skill uploads and Memory writes (docs/api-guide.md, "Idempotent requests"): a
 * repeat with the key replays the first response and adds no Skill, version, Memory or Memory version;
 * the key with another request is 409 idempotency_key_reused and changes nothing.
 */
describe('Idempotency-Key on Skill uploads and Memory writes (real apps/files process, PostgreSQL, S3)', () => {
  let files: FilesUnderTest;
  let key: string;
  let workspace: string;
  beforeAll(async () => {
    files = await startFiles('skills-mem-idem');
    workspace = await files.createWorkspace();
    key = (await files.issueKey(workspace)).api_key;
  });
  afterAll(() => files.close());

  async function send(
    method: 'POST',
    path: string,
    contractPath: string,
    idempotencyKey: string,
    body: FormData | unknown,
  ) {
    const form = body instanceof FormData;
    const res = await fetch(`${files.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        'idempotency-key': idempotencyKey,
        ...(form ? {} : { 'content-type': 'application/json' }),
      },
      body: form ? body : JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    assertMatchesContract(method, contractPath, res.status, json);
    return { status: res.status, body: json, headers: res.headers };
  }

  const skillForm = (description = 'Works with PDF files.') => {
    const form = new FormData();
    for (const [path, content] of bundle()) {
      const text = path.endsWith('SKILL.md') ? skillMd('pdf-tools', description) : content;
      form.append('files[]', new Blob([text], { type: 'application/octet-stream' }), path);
    }
    return form;
  };
  const count = async (sql: string, params: unknown[]) =>
    Number((await files.sql<{ n: string }>(sql, params))[0]!.n);
  const versions = (skillId: string) =>
    count('SELECT count(*) AS n FROM skill_versions WHERE skill_id = $1', [skillId]);
  const skills = () => count('SELECT count(*) AS n FROM skills WHERE workspace_id = $1', [workspace]);
  const skillObjects = async () =>
    (await files.objectKeys()).filter((k) => k.startsWith(`workspaces/${workspace}/skills/`)).length;

  it('a Skill create repeated with its key makes one Skill and replays the first response', async () => {
    const before = await skills();
    const first = await send('POST', '/v1/skills', '/v1/skills', 'skill-create-1', skillForm());
    const again = await send('POST', '/v1/skills', '/v1/skills', 'skill-create-1', skillForm());
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('request-id')).toBe(first.headers.get('request-id'));
    expect(await skills()).toBe(before + 1);
    expect(await versions(first.body.id)).toBe(1);
  });

  it('a Skill version upload repeated with its key adds no version; another bundle under the key is 409 and stores nothing', async () => {
    const skill = (await send('POST', '/v1/skills', '/v1/skills', 'skill-create-2', skillForm())).body;
    const path = `/v1/skills/${skill.id}/versions`;
    const contract = '/v1/skills/{skill_id}/versions';
    const first = await send('POST', path, contract, 'skill-version-2', skillForm('Second.'));
    const again = await send('POST', path, contract, 'skill-version-2', skillForm('Second.'));
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await versions(skill.id)).toBe(2);
    const objectsBefore = await skillObjects();
    const other = await send('POST', path, contract, 'skill-version-2', skillForm('Third.'));
    expect(other.status).toBe(409);
    expect(other.body.error.details).toEqual({ error_code: 'idempotency_key_reused' });
    expect(await versions(skill.id)).toBe(2);
    expect(await skillObjects()).toBe(objectsBefore);
    expect((await files.stored()).cleanups).toBe(0);
  });

  it('a Memory create or update repeated with its key writes one Memory version and replays the first response', async () => {
    const store = (await send('POST', '/v1/memory_stores', '/v1/memory_stores', 'store-1', { name: 'notes' }))
      .body;
    const again = await send('POST', '/v1/memory_stores', '/v1/memory_stores', 'store-1', { name: 'notes' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(store.id);
    expect(await count('SELECT count(*) AS n FROM memory_stores WHERE workspace_id = $1', [workspace])).toBe(
      1,
    );

    const memories = `/v1/memory_stores/${store.id}/memories`;
    const contract = '/v1/memory_stores/{memory_store_id}/memories';
    const body = { path: '/notes.md', content: 'remember this' };
    const created = await send('POST', memories, contract, 'memory-create-1', body);
    const replayed = await send('POST', memories, contract, 'memory-create-1', body);
    expect([created.status, replayed.status]).toEqual([201, 201]);
    expect(replayed.body).toEqual(created.body);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    const memoryVersions = () =>
      count('SELECT count(*) AS n FROM memory_versions WHERE memory_store_id = $1', [store.id]);
    expect(await memoryVersions()).toBe(1);

    // The key with another write: refused, nothing written (no second Memory at another path).
    const other = await send('POST', memories, contract, 'memory-create-1', {
      path: '/other.md',
      content: 'x',
    });
    expect(other.status).toBe(409);
    expect(other.body.error.details).toEqual({ error_code: 'idempotency_key_reused' });
    expect(await count('SELECT count(*) AS n FROM memories WHERE memory_store_id = $1', [store.id])).toBe(1);

    const one = `${memories}/${created.body.id}`;
    const oneContract = '/v1/memory_stores/{memory_store_id}/memories/{memory_id}';
    const update = { content: 'remember that' };
    const updated = await send('POST', one, oneContract, 'memory-update-1', update);
    const updatedAgain = await send('POST', one, oneContract, 'memory-update-1', update);
    expect([updated.status, updatedAgain.status]).toEqual([200, 200]);
    expect(updatedAgain.body).toEqual(updated.body);
    expect(updatedAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(await memoryVersions()).toBe(2);
    expect((await files.stored()).cleanups).toBe(0);
  });
});
