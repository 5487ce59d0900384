import { DomainError } from '@mango/domain-kernel';
import { checkBundleLayout, parseMemberPath, parseSkillMd } from './skill-bundle';

describe('parseSkillMd', () => {
  it('reads name and description, with CRLF line ends, extra keys and a body', () => {
    const md =
      '---\r\nname: pdf-tools\r\ndescription: "Fills: forms"\r\nlicense: MIT\r\nmetadata: {a: 1}\r\n---\r\n# Body\n';
    expect(parseSkillMd(Buffer.from(md))).toEqual({ name: 'pdf-tools', description: 'Fills: forms' });
  });

  it('accepts a UTF-8 byte order mark before the frontmatter', () => {
    expect(parseSkillMd(Buffer.from('\ufeff---\nname: a\ndescription: b\n---\n'))).toEqual({
      name: 'a',
      description: 'b',
    });
  });

  it('accepts frontmatter at the very end of the file', () => {
    expect(parseSkillMd(Buffer.from('---\nname: a\ndescription: b\n---'))).toEqual({
      name: 'a',
      description: 'b',
    });
  });

  it.each([
    ['a leading blank line', '\n---\nname: a\ndescription: b\n---\n'],
    ['YAML aliases', '---\nx: &x b\nname: a\ndescription: *x\n---\n'],
    ['a multi-document separator inside', '---\nname: a\n---\ndescription: b\n---\n'],
    ['a boolean description', '---\nname: a\ndescription: true\n---\n'],
    ['a name with a trailing hyphen', '---\nname: a-\ndescription: b\n---\n'],
    ['a name with a double hyphen', '---\nname: a--b\ndescription: b\n---\n'],
    ['a whitespace-only description', '---\nname: a\ndescription: "   "\n---\n'],
  ])('refuses %s with a 400', (_label, md) => {
    expect(() => parseSkillMd(Buffer.from(md))).toThrow(DomainError);
  });
});

describe('bundle layout', () => {
  it('returns the top directory of a valid layout', () => {
    expect(checkBundleLayout(['t/SKILL.md', 't/a/b.md', 't/a/c.md'])).toBe('t');
  });

  it.each([
    [[], /no files/],
    [['t/a.md'], /needs "t\/SKILL.md"/],
    [['t/SKILL.md', 'u/SKILL.md'], /one top-level directory/],
    [['t/SKILL.md', 't/SKILL.md'], /twice/],
    [['t/SKILL.md', 't/a', 't/a/b'], /both a file and a directory/],
  ])('refuses %j', (paths, message) => {
    expect(() => checkBundleLayout(paths)).toThrow(message);
  });

  it('keeps a safe member path as sent and refuses a missing one', () => {
    expect(parseMemberPath('t/ü ✓.md')).toBe('t/ü ✓.md');
    expect(() => parseMemberPath(undefined)).toThrow(/needs a filename/);
    expect(() => parseMemberPath('t/../x')).toThrow(/unsafe path/);
  });
});
