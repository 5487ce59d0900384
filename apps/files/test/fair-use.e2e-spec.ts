import { randomBytes } from 'node:crypto';
import { FilesUnderTest, startFiles, upload } from './support';

/**
 * Fair use on apps/files (docs/api-guide.md "Fair use"): uploads count against their key's and their
 * Workspace's request rate on the process. The rates are one token per 1,000 s, so the counts do not
 * depend on the machine's speed. A refused upload is 429 `rate_limit_error` with `retry-after` and
 * stores nothing; another Workspace still uploads.
 */
describe('fair use on apps/files: uploads per key and per Workspace (real process, S3, PostgreSQL)', () => {
  let files: FilesUnderTest;

  beforeAll(async () => {
    files = await startFiles('fairuse', {
      MANGO_RATE_LIMIT_KEY_RPS: '0.001',
      MANGO_RATE_LIMIT_KEY_BURST: '3',
      MANGO_RATE_LIMIT_WORKSPACE_RPS: '0.001',
      MANGO_RATE_LIMIT_WORKSPACE_BURST: '4',
    });
  }, 120_000);

  afterAll(async () => {
    await files?.close();
  });

  it('Workspace A exhausts its upload rate and stores nothing more; Workspace B still uploads', async () => {
    const a1 = (await files.issueKey('wrkspc_default')).api_key;
    const a2 = (await files.issueKey('wrkspc_default')).api_key;
    const b = (await files.issueKey(await files.createWorkspace())).api_key;
    const uploads = async (key: string, n: number) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await upload(files.url, key, randomBytes(1024), `f${i}.bin`));
      return out;
    };

    const first = await uploads(a1, 5);
    expect(first.map((r) => r.status)).toEqual([201, 201, 201, 429, 429]);
    expect(first[3]!.body.error).toMatchObject({
      type: 'rate_limit_error',
      details: { limit: 'requests', scope: 'credential' },
    });
    const stored = await files.stored();
    expect(stored.files).toBe(3);

    // Another key of Workspace A: the Workspace's burst (4) has one upload left.
    const second = await uploads(a2, 3);
    expect(second.map((r) => r.status)).toEqual([201, 429, 429]);
    expect(second[1]!.body.error.details).toEqual({ limit: 'requests', scope: 'workspace' });
    expect((await files.stored()).files).toBe(4);

    // Workspace B is not starved.
    const other = await uploads(b, 3);
    expect(other.map((r) => r.status)).toEqual([201, 201, 201]);
    expect((await files.stored()).files).toBe(7);
  });
});
