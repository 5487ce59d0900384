import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// `npm run release`'s refusals: each exits before anything is built or written. The artifacts themselves
// are made and installed by tools/sdk/test/conformance.e2e-spec.ts (release.sh --only sdks).
const ROOT = join(__dirname, '../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function release(...args: string[]) {
  const r = spawnSync('bash', [join(ROOT, 'tools/release/release.sh'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { code: r.status, err: r.stderr };
}

describe('npm run release (tools/release/release.sh) refuses before it writes anything', () => {
  let out: string;
  beforeEach(() => (out = join(mkdtempSync(join(tmpdir(), 'mango-release-')), 'out')));
  afterEach(() => rmSync(join(out, '..'), { recursive: true, force: true }));

  it('a version other than the root package.json one, saying how to set it', () => {
    const r = release('99.0.0', '--out', out);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`asked for 99.0.0 but this tree is ${VERSION}`);
    expect(r.err).toContain('node tools/release/version.js set 99.0.0');
    expect(existsSync(out)).toBe(false);
  });

  it('an unknown part or option', () => {
    expect(release('--only', 'sdks,docs', '--out', out)).toMatchObject({
      code: 2,
      err: expect.stringContaining("unknown part 'docs'"),
    });
    expect(release('--publish', '--out', out)).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown option --publish'),
    });
    expect(existsSync(out)).toBe(false);
  });

  it('the CHANGELOG has the entry the release copies into RELEASE-NOTES.md (Keep a Changelog headings)', () => {
    const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toMatch(
      new RegExp(`^## \\[${VERSION.replace(/\./g, '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'),
    );
    expect(changelog).toMatch(/^## \[Unreleased\]$/m);
  });
});
