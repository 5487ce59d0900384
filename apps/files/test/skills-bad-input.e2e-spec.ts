import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { FilesUnderTest, multipart, startFiles } from './support';
import { Bundle, bundle, sendBundle, sendSkillForm, skillMd, storedSkills } from './skills-support';

const MAX_BYTES = 64 * 1024;
const MAX_FILES = 5;
const nothing = { skills: 0, versions: 0, cleanups: 0, objects: [], incomplete: [] };

const part = (name: string, filename: string | undefined, body: string | Buffer) => ({
  headers:
    filename === undefined
      ? `Content-Disposition: form-data; name="${name}"`
      : `Content-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: application/octet-stream`,
  body,
});

/** Bad bundles → the documented status; nothing is stored, no object or unfinished upload is left. */
describe('Skills: bad input and limits (real apps/files process)', () => {
  let files: FilesUnderTest;
  let key: string;
  let skillId: string;
  beforeAll(async () => {
    files = await startFiles('skillsbad', {
      MANGO_SKILLS_MAX_BYTES: String(MAX_BYTES),
      MANGO_SKILLS_MAX_FILES: String(MAX_FILES),
    });
    key = (await files.issueKey('wrkspc_default')).api_key;
  });
  afterAll(() => files.close());

  const md = (front: string) => `---\n${front}\n---\nbody\n`;
  const table: Array<[string, Bundle, number]> = [
    ['no SKILL.md', [['s/readme.md', 'x']], 400],
    ['SKILL.md below the top directory', [['s/sub/SKILL.md', skillMd()]], 400],
    ['files under two top directories', [...bundle('s'), ['t/x.md', 'x']], 400],
    ['a ".." segment', [...bundle('s'), ['s/../escape.sh', 'x']], 400],
    ['a leading ".." (traversal out of the bundle)', [['../s/SKILL.md', skillMd()]], 400],
    ['an absolute path', [['/s/SKILL.md', skillMd()]], 400],
    ['an empty segment', [...bundle('s'), ['s//x', 'x']], 400],
    ['a "." segment', [...bundle('s'), ['s/./x', 'x']], 400],
    ['a backslash', [...bundle('s'), ['s\\..\\x', 'x']], 400],
    ['a file at the top (no directory)', [['SKILL.md', skillMd()]], 400],
    ['the same path twice', [...bundle('s'), ['s/SKILL.md', skillMd()]], 400],
    ['a path used as a file and a directory', [...bundle('s'), ['s/scripts/run.sh/x', 'x']], 400],
    ['SKILL.md without frontmatter', [['s/SKILL.md', '# just markdown\n']], 400],
    ['unterminated frontmatter', [['s/SKILL.md', '---\nname: a\ndescription: b\n']], 400],
    ['frontmatter that is not YAML', [['s/SKILL.md', md('name: [unclosed\ndescription: x')]], 400],
    ['frontmatter that is a list', [['s/SKILL.md', md('- name\n- description')]], 400],
    ['duplicate frontmatter keys', [['s/SKILL.md', md('name: a\nname: b\ndescription: x')]], 400],
    ['no name', [['s/SKILL.md', md('description: x')]], 400],
    ['an upper-case name', [['s/SKILL.md', md('name: PDF\ndescription: x')]], 400],
    ['a name with a slash', [['s/SKILL.md', md('name: a/b\ndescription: x')]], 400],
    ['a numeric name', [['s/SKILL.md', md('name: 12\ndescription: x')]], 400],
    ['a 65-character name', [['s/SKILL.md', md(`name: ${'a'.repeat(65)}\ndescription: x`)]], 400],
    ['no description', [['s/SKILL.md', md('name: a')]], 400],
    ['an empty description', [['s/SKILL.md', md('name: a\ndescription: ""')]], 400],
    ['a 1025-character description', [['s/SKILL.md', md(`name: a\ndescription: ${'d'.repeat(1025)}`)]], 400],
    ['SKILL.md that is not UTF-8', [['s/SKILL.md', Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0xfe])]], 400],
    [
      'more files than the limit',
      Array.from(
        { length: MAX_FILES + 1 },
        (_, i) => [i ? `s/f${i}` : 's/SKILL.md', i ? 'x' : skillMd()] as [string, string],
      ),
      400,
    ],
    ['more bytes than the limit', [...bundle('s'), ['s/big.bin', randomBytes(MAX_BYTES)]], 413],
    // Within the limit expanded, but incompressible: the archive (tar headers, gzip framing) is over it.
    [
      'an archive over the limit although its files are within it',
      [
        ['s/SKILL.md', skillMd()],
        ['s/random.bin', randomBytes(MAX_BYTES - 200)],
      ],
      413,
    ],
  ];

  it.each(table)('refuses a bundle with %s (%#) and stores nothing', async (_label, files_, status) => {
    const res = await sendBundle(files.url, key, files_);
    expect(res.status).toBe(status);
    expect(res.body.error.type).toBe(status === 413 ? 'request_too_large' : 'invalid_request_error');
    expect(await storedSkills(files)).toEqual(nothing);
  });

  it.each(table.filter(([, , status]) => status === 400).slice(0, 6))(
    'refuses a new version with %s and leaves the Skill as it was',
    async (_label, files_) => {
      skillId ??= (await sendBundle(files.url, key, bundle('s'))).body.id;
      const before = await storedSkills(files);
      const res = await sendBundle(files.url, key, files_, { skillId });
      expect([res.status, res.body.error.type]).toEqual([400, 'invalid_request_error']);
      expect(await storedSkills(files)).toEqual(before);
      const skill = (await (
        await fetch(`${files.url}/v1/skills/${skillId}`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as { latest_version: string };
      expect(skill.latest_version).toBe('1');
    },
  );

  describe('malformed forms', () => {
    beforeAll(async () => {
      if (skillId)
        await fetch(`${files.url}/v1/skills/${skillId}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${key}` },
        });
    });
    const forms: Array<[string, () => { contentType: string; body: Buffer }]> = [
      ['a JSON body', () => ({ contentType: 'application/json', body: Buffer.from('{"files":[]}') })],
      ['an empty form', () => multipart([])],
      ['only display_title', () => multipart([part('display_title', undefined, 'Title')])],
      ['a files[] field without a filename', () => multipart([part('files[]', undefined, 'x')])],
      ['a part named otherwise', () => multipart([part('file', 's/SKILL.md', skillMd())])],
      [
        'an unknown field',
        () => multipart([part('files[]', 's/SKILL.md', skillMd()), part('color', undefined, 'x')]),
      ],
      [
        'a NUL in a path',
        () => multipart([part('files[]', 's/SKILL.md', skillMd()), part('files[]', 's/a\u0000b', 'x')]),
      ],
      [
        'a newline in a path',
        () =>
          multipart([
            part('files[]', 's/SKILL.md', skillMd()),
            part('files[]', 's/a%0Ab', 'x'),
            part('files[]', 's/a\nb', 'x'),
          ]),
      ],
      [
        'a 256-character display_title',
        () =>
          multipart([
            part('display_title', undefined, 't'.repeat(256)),
            part('files[]', 's/SKILL.md', skillMd()),
          ]),
      ],
      [
        'a display_title with a control character',
        () =>
          multipart([part('display_title', undefined, 'a\u0007b'), part('files[]', 's/SKILL.md', skillMd())]),
      ],
    ];
    it.each(forms)('refuses %s with 400 and stores nothing', async (_label, build) => {
      const res = await sendSkillForm(files.url, key, build());
      expect([res.status, res.body.error.type]).toEqual([400, 'invalid_request_error']);
      expect(await storedSkills(files)).toEqual(nothing);
    });

    it('refuses a body cut off mid-form with 400 and stores nothing', async () => {
      const form = multipart([
        part('files[]', 's/SKILL.md', skillMd()),
        part('files[]', 's/more.md', 'x'.repeat(4000)),
      ]);
      const res = await sendSkillForm(files.url, key, {
        contentType: form.contentType,
        body: form.body.subarray(0, form.body.length - 2000),
      });
      expect([res.status, res.body.error.type]).toEqual([400, 'invalid_request_error']);
      expect(await storedSkills(files)).toEqual(nothing);
    });

    it('refuses a Content-Length far over the limit with 413 before reading the body', async () => {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${files.url}/v1/skills`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'multipart/form-data; boundary=x',
            'content-length': String(MAX_BYTES * 100),
          },
        });
        req.on('response', (res) => {
          res.resume();
          resolve(res.statusCode!);
          req.destroy();
        });
        req.on('error', reject);
        req.write(Buffer.alloc(16));
      });
      expect(status).toBe(413);
      expect(await storedSkills(files)).toEqual(nothing);
    });
  });

  it('accepts a bundle of exactly the file and byte limits', async () => {
    const filler = MAX_BYTES - Buffer.byteLength(skillMd()) - (MAX_FILES - 2);
    const exact: Bundle = [
      ['s/SKILL.md', skillMd()],
      ...Array.from({ length: MAX_FILES - 2 }, (_, i) => [`s/f${i}`, 'x'] as [string, string]),
      ['s/big.bin', Buffer.alloc(filler, 7)],
    ];
    const res = await sendBundle(files.url, key, exact);
    expect(res.status).toBe(201);
    const v = (await (
      await fetch(`${files.url}/v1/skills/${res.body.id}/versions/1`, {
        headers: { authorization: `Bearer ${key}` },
      })
    ).json()) as { file_count: number; expanded_size_bytes: number };
    expect([v.file_count, v.expanded_size_bytes]).toEqual([MAX_FILES, MAX_BYTES]);
    await fetch(`${files.url}/v1/skills/${res.body.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(await storedSkills(files)).toEqual(nothing);
  });
});
