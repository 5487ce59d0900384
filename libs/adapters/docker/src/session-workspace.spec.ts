import { sessionWorkspaceDir } from './item-launcher';

describe('sessionWorkspaceDir: the --workspace-root path comes from the validated Session id only', () => {
  it('joins the root and the Session id', () => {
    expect(sessionWorkspaceDir('/srv/mango', 'sesn_01JD8X3W5K9Q2V7B6N4M0P1R2S')).toBe(
      '/srv/mango/sesn_01JD8X3W5K9Q2V7B6N4M0P1R2S',
    );
  });

  it.each([
    ['a traversal', '../../etc'],
    ['a traversal after the prefix', 'sesn_../../../../../../etc/x'],
    ['a lower-case id', 'sesn_01jd8x3w5k9q2v7b6n4m0p1r2s'],
    ['another id kind', 'envx_01JD8X3W5K9Q2V7B6N4M0P1R2S'],
    ['a slash', 'sesn_01JD8X3W5K9Q2V7B6N4M0P1R2/'],
    ['an absolute path', '/etc/passwd'],
    ['a ULID with a forbidden letter (U)', 'sesn_01JD8X3W5K9Q2V7B6N4M0P1R2U'],
    ['empty', ''],
  ])('refuses %s', (_, id) => {
    expect(() => sessionWorkspaceDir('/srv/mango', id)).toThrow(/malformed Session id/);
  });
});
