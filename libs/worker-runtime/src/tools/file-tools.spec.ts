import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Confinement } from './confine';
import { editTool } from './edit';
import { globTool } from './glob';
import { grepTool } from './grep';
import { readTool } from './read';
import { Tool, ToolError } from './types';
import { writeTool } from './write';

/** The five file tools on real temp directories, including escape attempts through `..` and symlinks. */
describe('file tools', () => {
  let base: string;
  let ws: string;
  let mem: string;
  let ro: string;
  let outside: string;
  let tools: Record<string, Tool>;
  const ctx = () => ({
    signal: new AbortController().signal,
    toolUse: { id: 'sevt_1', name: 'x', input: {} },
  });
  const run = (name: string, input: Record<string, unknown>) => tools[name]!.run(input, ctx());
  const fails = async (name: string, input: Record<string, unknown>): Promise<string> => {
    const err = await run(name, input).then(
      (ok) => new Error(`expected a failure, got ${ok}`),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ToolError);
    return (err as Error).message;
  };

  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'tools-'));
    ws = join(base, 'workspace');
    mem = join(base, 'mnt/memory/notes');
    ro = join(base, 'mnt/memory/ro');
    outside = join(base, 'outside');
    for (const d of [ws, mem, ro, outside]) mkdirSync(d, { recursive: true });
    writeFileSync(join(outside, 'secret.txt'), 'top secret\n');
    writeFileSync(join(ro, 'fixed.md'), 'read only\n');
    const conf = new Confinement(ws, [
      { path: mem, readOnly: false },
      { path: ro, readOnly: true },
    ]);
    tools = {
      read: readTool(conf, 1024),
      write: writeTool(conf),
      edit: editTool(conf, 1024),
      glob: globTool(conf),
      grep: grepTool(conf, 5000),
    };
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  describe('confinement: escapes are refused by every file tool', () => {
    beforeEach(() => {
      symlinkSync(outside, join(ws, 'link-dir'));
      symlinkSync(join(outside, 'secret.txt'), join(ws, 'link-file'));
      symlinkSync(join(outside, 'new.txt'), join(ws, 'dangling'));
    });
    const outsideMsg = /outside the session's working directory and its other permitted directories/;
    it.each([
      ['read', { file_path: '../outside/secret.txt' }],
      ['read', { file_path: '/etc/passwd' }],
      ['read', { file_path: 'link-file' }],
      ['read', { file_path: 'link-dir/secret.txt' }],
      ['write', { file_path: '../outside/x.txt', content: 'x' }],
      ['write', { file_path: 'link-dir/x.txt', content: 'x' }],
      ['write', { file_path: 'dangling', content: 'x' }],
      ['write', { file_path: 'link-file', content: 'x' }],
      ['edit', { file_path: 'link-file', old_string: 'top', new_string: 'x' }],
      ['glob', { pattern: '*', path: '../outside' }],
      ['glob', { pattern: '*', path: 'link-dir' }],
      ['grep', { pattern: 'secret', path: 'link-dir' }],
      ['grep', { pattern: 'secret', path: '/' }],
    ])('%s %j', async (tool, input) => {
      expect(await fails(tool, input)).toMatch(outsideMsg);
      expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
      expect(existsSync(join(outside, 'x.txt'))).toBe(false);
      expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    });

    it('a symlink that stays inside the workspace is followed', async () => {
      writeFileSync(join(ws, 'real.txt'), 'inside\n');
      symlinkSync(join(ws, 'real.txt'), join(ws, 'alias.txt'));
      expect(await run('read', { file_path: 'alias.txt' })).toBe('inside\n');
    });

    it('glob and grep do not follow a symlink out of the tree', async () => {
      writeFileSync(join(ws, 'a.txt'), 'secret here\n');
      expect(await run('glob', { pattern: '**/*' })).toBe(join(ws, 'a.txt'));
      expect(await run('grep', { pattern: 'secret' })).toBe(`${join(ws, 'a.txt')}:1:secret here`);
    });

    it('attached Memory roots are permitted; read-only roots refuse write and edit', async () => {
      expect(await run('write', { file_path: join(mem, 'a.md'), content: 'hi' })).toBe(
        `wrote 2 bytes to ${join(mem, 'a.md')}`,
      );
      expect(await run('read', { file_path: join(ro, 'fixed.md') })).toBe('read only\n');
      expect(await fails('write', { file_path: join(ro, 'new.md'), content: 'x' })).toBe(
        `write: ${join(ro, 'new.md')} is inside read-only directory ${ro}`,
      );
      expect(
        await fails('edit', { file_path: join(ro, 'fixed.md'), old_string: 'read', new_string: 'w' }),
      ).toBe(`edit: ${join(ro, 'fixed.md')} is inside read-only directory ${ro}`);
      expect(readFileSync(join(ro, 'fixed.md'), 'utf8')).toBe('read only\n');
    });

    it('without extra roots the message names only the working directory', async () => {
      const plain = readTool(new Confinement(ws));
      await expect(plain.run({ file_path: '/etc/passwd' }, ctx())).rejects.toThrow(
        'read: path "/etc/passwd" is outside the session\'s working directory',
      );
    });
  });

  describe('read', () => {
    beforeEach(() => writeFileSync(join(ws, 'lines.txt'), 'one\ntwo\nthree\nfour\n'));
    it.each([
      [{ file_path: 'lines.txt' }, 'one\ntwo\nthree\nfour\n'],
      [{ file_path: 'lines.txt', view_range: [2, 3] }, 'two\nthree'],
      [{ file_path: 'lines.txt', view_range: [3, -1] }, 'three\nfour'],
      [{ file_path: 'lines.txt', view_range: [3, 0] }, 'three\nfour'],
      [{ file_path: './lines.txt', view_range: [1, 1] }, 'one'],
    ])('%j', async (input, expected) => {
      expect(await run('read', input)).toBe(expected);
    });
    it.each([
      [{}, 'read: file_path is required'],
      [{ file_path: 'lines.txt', view_range: [0, 2] }, 'read: view_range must be [start_line, end_line]'],
      [{ file_path: 'lines.txt', view_range: [3, 2] }, 'read: view_range must be [start_line, end_line]'],
      [{ file_path: 'lines.txt', view_range: 'x' }, 'read: view_range must be [start_line, end_line]'],
      [{ file_path: 'missing.txt' }, 'read: missing.txt: no such file or directory'],
      [{ file_path: '.' }, 'read: . is not a regular file'],
    ])('%j fails', async (input, message) => {
      expect(await fails('read', input)).toBe(message);
    });
    it('caps whole-file reads and ranged reads', async () => {
      writeFileSync(join(ws, 'big.txt'), `${'x'.repeat(600)}\n${'y'.repeat(600)}\n`);
      expect(await fails('read', { file_path: 'big.txt' })).toMatch(
        /^read: big.txt is 1202 bytes, exceeds 1024-byte limit\. Use the view_range parameter/,
      );
      expect(await run('read', { file_path: 'big.txt', view_range: [2, 2] })).toBe('y'.repeat(600));
      expect(await fails('read', { file_path: 'big.txt', view_range: [1, 2] })).toMatch(
        /^read: view_range \[1, 2\] of big.txt exceeds 1024-byte limit/,
      );
    });
    it('by default (the contract) a file above 110,000 bytes needs a view_range; one of 110,000 is read whole', async () => {
      const read = readTool(new Confinement(ws, []));
      const line = `${'z'.repeat(99)}\n`;
      writeFileSync(join(ws, 'at-limit.txt'), line.repeat(1100));
      writeFileSync(join(ws, 'above.txt'), `${line.repeat(1100)}!`);
      expect(await read.run({ file_path: 'at-limit.txt' }, ctx())).toHaveLength(110_000);
      const err = await read.run({ file_path: 'above.txt' }, ctx()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ToolError);
      expect((err as Error).message).toBe(
        'read: above.txt is 110001 bytes, exceeds 110000-byte limit. Use the view_range parameter to read specific line ranges, e.g. view_range: [1, 500].',
      );
      expect(await read.run({ file_path: 'above.txt', view_range: [1101, 1101] }, ctx())).toBe('!');
    });
  });

  describe('write and edit', () => {
    it('write creates parents (0700) and replaces atomically', async () => {
      expect(await run('write', { file_path: 'a/b/c.txt', content: 'héllo' })).toBe(
        'wrote 6 bytes to a/b/c.txt',
      );
      expect(readFileSync(join(ws, 'a/b/c.txt'), 'utf8')).toBe('héllo');
      await run('write', { file_path: 'a/b/c.txt', content: 'second' });
      expect(readFileSync(join(ws, 'a/b/c.txt'), 'utf8')).toBe('second');
      expect(await fails('write', { file_path: 'a', content: 'x' })).toBe('write: a: is a directory');
      expect(await fails('write', { file_path: 'x' })).toBe('write: content is required');
    });
    it.each([
      [{ old_string: 'b', new_string: 'B' }, 'edited f.txt (1 replacement)', 'aBc a.c'],
      [
        { old_string: 'a', new_string: '$&', replace_all: true },
        'edited f.txt (2 replacements)',
        '$&bc $&.c',
      ],
      [{ old_string: 'a.c', new_string: '' }, 'edited f.txt (1 replacement)', 'abc '],
    ])('edit %j', async (input, message, content) => {
      writeFileSync(join(ws, 'f.txt'), 'abc a.c');
      expect(await run('edit', { file_path: 'f.txt', ...input })).toBe(message);
      expect(readFileSync(join(ws, 'f.txt'), 'utf8')).toBe(content);
    });
    it.each([
      [{ old_string: 'zzz', new_string: 'y' }, 'edit: old_string not found in f.txt'],
      [{ old_string: 'a', new_string: 'y' }, 'edit: old_string appears 2 times in f.txt (must be unique)'],
      [{ old_string: '', new_string: 'y' }, 'edit: old_string must be a non-empty string'],
    ])('edit %j fails and leaves the file', async (input, message) => {
      writeFileSync(join(ws, 'f.txt'), 'abc a.c');
      expect(await fails('edit', { file_path: 'f.txt', ...input })).toBe(message);
      expect(readFileSync(join(ws, 'f.txt'), 'utf8')).toBe('abc a.c');
    });
  });

  describe('glob', () => {
    beforeEach(() => {
      mkdirSync(join(ws, 'src/deep'), { recursive: true });
      mkdirSync(join(ws, 'node_modules/x'), { recursive: true });
      mkdirSync(join(ws, '.git'), { recursive: true });
      writeFileSync(join(ws, 'src/old.ts'), '');
      writeFileSync(join(ws, 'src/deep/new.ts'), '');
      writeFileSync(join(ws, 'node_modules/x/i.ts'), '');
      writeFileSync(join(ws, '.git/HEAD.ts'), '');
      utimesSync(join(ws, 'src/old.ts'), 1000, 1000);
    });
    it.each([
      [{ pattern: '**/*.ts' }, ['src/deep/new.ts', 'src/old.ts']],
      [{ pattern: '*.ts', path: 'src' }, ['src/old.ts']],
      [{ pattern: '*.md' }, []],
    ])('%j (newest first, no .git or node_modules)', async (input, expected) => {
      const want = expected.length ? expected.map((f) => join(ws, f)).join('\n') : 'no matches';
      expect(await run('glob', input)).toBe(want);
    });
    it.each([
      [
        { pattern: '/etc/*' },
        'glob: absolute pattern not permitted; pass a relative pattern (and optionally path)',
      ],
      [{ pattern: '../*' }, 'glob: ".." is not permitted in the pattern'],
      [{ pattern: 'src/../../x' }, 'glob: ".." is not permitted in the pattern'],
    ])('%j fails', async (input, message) => {
      expect(await fails('glob', input)).toBe(message);
    });
  });

  describe('grep', () => {
    beforeEach(() => {
      mkdirSync(join(ws, 'src'));
      writeFileSync(join(ws, 'src/a.ts'), 'const a = 1;\n// TODO fix\nconst b = 2;\n');
      writeFileSync(join(ws, 'bin.dat'), Buffer.from('TODO before\n\0TODO after\n'));
      writeFileSync(join(ws, 'long.txt'), `${'TODO'.repeat(600)}\nTODO short\n`);
    });
    it.each([
      [{ pattern: 'const \\w = 2' }, 'src/a.ts:3:const b = 2;'],
      [{ pattern: 'TODO', path: 'src/a.ts' }, 'src/a.ts:2:// TODO fix'],
      [{ pattern: 'nothing-matches' }, ''],
    ])('%j', async (input, expected) => {
      expect(await run('grep', input)).toBe(expected ? `${ws}/${expected}` : 'no matches');
    });
    it('skips over-long lines and stops a file at its first NUL', async () => {
      const out = (await run('grep', { pattern: 'TODO' })).split('\n').sort();
      expect(out).toEqual(
        [
          `${join(ws, 'bin.dat')}:1:TODO before`,
          `${join(ws, 'long.txt')}:2:TODO short`,
          `${join(ws, 'src/a.ts')}:2:// TODO fix`,
        ].sort(),
      );
    });
    it('rejects an invalid regex', async () => {
      expect(await fails('grep', { pattern: '(' })).toMatch(/^grep: invalid regex: /);
    });
    it('a catastrophic pattern is cut off by the time limit without blocking the event loop', async () => {
      writeFileSync(join(ws, 'evil.txt'), `${'a'.repeat(40)}!\n`);
      let ticks = 0;
      const timer = setInterval(() => ticks++, 50);
      const message = await fails('grep', { pattern: '^(a+)+$', path: 'evil.txt' });
      clearInterval(timer);
      expect(message).toBe('grep: timed out after 5s');
      expect(ticks).toBeGreaterThan(10);
    }, 20_000);
  });
});
