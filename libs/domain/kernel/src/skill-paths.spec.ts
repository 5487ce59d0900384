import { unsafeSkillPath } from './skill-paths';

describe('unsafeSkillPath', () => {
  it.each(['my-skill/SKILL.md', 'my-skill/scripts/run.sh', 'x/ünïcode ✓.md', `a/${'b'.repeat(255)}`])(
    'accepts %j',
    (p) => {
      expect(unsafeSkillPath(p)).toBeNull();
    },
  );

  it.each([
    ['', /empty/],
    ['SKILL.md', /top-level directory/],
    ['/abs/SKILL.md', /absolute/],
    ['C:/x/y', /drive letter/],
    ['a/../b', /"\.\." segment/],
    ['../a/b', /"\.\." segment/],
    ['a/./b', /"\." segment/],
    ['a//b', /empty segment/],
    ['a/b/', /empty segment/],
    ['a/b\u0000c', /control character/],
    ['a/b\nc', /control character/],
    ['a\\b', /backslash/],
    [`a/${'b'.repeat(256)}`, /segment is longer/],
    [`a/${'b/'.repeat(600)}c`, /longer than 1024 bytes/],
  ])('rejects %j', (p, reason) => {
    expect(unsafeSkillPath(p)).toMatch(reason);
  });
});
