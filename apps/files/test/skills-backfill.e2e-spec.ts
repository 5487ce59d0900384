import { FilesUnderTest, startFiles, waitFor } from './support';
import { bundle, sendBundle } from './skills-support';

type Row = { skill_id: string; version: number; path: string; content: string | null };

/**
 * Skill versions uploaded before Mango kept their text files (no `skill_version_files` rows) get them
 * when apps/files starts, read from each version's own archive: the same rows an upload writes today.
 */
describe('Skill text backfill at start (real apps/files processes, PostgreSQL and S3)', () => {
  let files: FilesUnderTest;
  beforeAll(async () => {
    files = await startFiles('skillbackfill');
  });
  afterAll(() => files.close());

  const rows = (skillId: string) =>
    files.sql<Row>(
      'SELECT skill_id, version, path, content FROM skill_version_files WHERE skill_id = $1 ORDER BY version, path',
      [skillId],
    );

  it('a restarted process restores the rows of versions that have none, exactly as an upload wrote them', async () => {
    const key = (await files.issueKey('wrkspc_default')).api_key;
    const big = 'x'.repeat(300 * 1024); // over the kept-text limit: a row without content
    const created = await sendBundle(
      files.url,
      key,
      bundle('pdf-tools', [
        ['pdf-tools/big.txt', big],
        ['pdf-tools/logo.bin', Buffer.from([0, 1, 2, 255])],
      ]),
    );
    expect(created.status).toBe(201);
    const skillId = created.body.id as string;
    expect((await sendBundle(files.url, key, bundle(), { skillId })).status).toBe(201);
    const uploaded = await rows(skillId);
    expect(uploaded.filter((r) => r.version === 1).map((r) => r.path)).toEqual([
      'SKILL.md',
      'big.txt',
      'logo.bin',
      'reference/notes.md',
      'scripts/run.sh',
    ]);
    expect(uploaded.find((r) => r.path === 'big.txt')!.content).toBeNull();
    expect(uploaded.find((r) => r.path === 'logo.bin')!.content).toBeNull();

    // What a database migrated from before the table looks like: versions without rows.
    await files.sql('DELETE FROM skill_version_files WHERE skill_id = $1', [skillId]);
    expect(await rows(skillId)).toEqual([]);

    const next = await files.startProcess({ MANGO_LOG_LEVEL: 'info' });
    await waitFor(async () => (await rows(skillId)).length === uploaded.length, 60_000, 'the backfill');
    expect(await rows(skillId)).toEqual(uploaded);
    // It says what it did (logged once the pass ends, just after the last rows commit).
    await waitFor(
      async () => /kept the text files of 2 earlier Skill version\(s\)/.test(next.app.logs()),
      30_000,
      'the backfill to log what it did',
    );

    // Idempotent: another start finds nothing to do and changes nothing.
    const again = await files.startProcess({ MANGO_LOG_LEVEL: 'info' });
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await rows(skillId)).toEqual(uploaded);
    expect(again.app.logs()).not.toMatch(/kept the text files/);
    await again.app.stop();
    await next.app.stop();
  }, 180_000);
});
