import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

// tools/release/version.js is plain Node (release.sh runs it before anything is built).
const version = require('./version.js') as {
  check(root: string): { version: string; problems: Array<{ where: string; found?: string; want: string }> };
  set(root: string, v: string): void;
  pep440(v: string): string;
  COPIES: Array<{ file: string }>;
};

const ROOT = join(__dirname, '../..');
const FILES = ['package.json', ...new Set(version.COPIES.map((c) => c.file))];

/** A copy of the files that hold a version, in a fresh directory. */
function copyTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mango-version-'));
  for (const f of FILES) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(ROOT, f), join(dir, f));
  }
  return dir;
}

describe('the release version (one source: the root package.json)', () => {
  let dir: string;
  beforeEach(() => (dir = copyTree()));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('every package, the contract and the chart carry the root package.json version in this tree', () => {
    const { version: v, problems } = version.check(ROOT);
    expect(problems).toEqual([]);
    expect(v).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('a copy that disagrees fails the check, which names the file and both versions', () => {
    const pyproject = join(dir, 'libs/sdk/python/pyproject.toml');
    writeFileSync(
      pyproject,
      readFileSync(pyproject, 'utf8').replace(/^version = ".*"$/m, 'version = "9.9.9"'),
    );
    const core = join(dir, 'libs/sdk/typescript/src/core.ts');
    writeFileSync(core, readFileSync(core, 'utf8').replace(/SDK_VERSION = '.*'/, "SDK_VERSION = '0.0.1'"));
    const { version: v, problems } = version.check(dir);
    expect(problems).toEqual([
      { where: expect.stringContaining('libs/sdk/typescript/src/core.ts'), found: '0.0.1', want: v },
      { where: expect.stringContaining('libs/sdk/python/pyproject.toml'), found: '9.9.9', want: v },
    ]);
  });

  it('a copy whose version line is gone or doubled fails the check', () => {
    const client = join(dir, 'libs/sdk/go/mango/client.go');
    writeFileSync(
      client,
      readFileSync(client, 'utf8').replace(/^const Version = ".*"$/m, 'const Version = V'),
    );
    const chart = join(dir, 'deployments/helm/mango/Chart.yaml');
    writeFileSync(chart, readFileSync(chart, 'utf8') + 'version: 0.1.0\n');
    const where = version.check(dir).problems.map((p) => p.where);
    expect(where).toEqual([
      expect.stringContaining('libs/sdk/go/mango/client.go'),
      expect.stringMatching(/Chart\.yaml .*\^\(version/),
    ]);
  });

  it('set writes one version everywhere (Python in its PEP 440 spelling) and changes nothing else', () => {
    const before = Object.fromEntries(FILES.map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
    version.set(dir, '2.3.0-rc.4');
    expect(version.check(dir)).toEqual({ version: '2.3.0-rc.4', problems: [] });
    expect(readFileSync(join(dir, 'libs/sdk/python/pyproject.toml'), 'utf8')).toMatch(
      /^version = "2\.3\.0rc4"$/m,
    );
    expect(readFileSync(join(dir, 'openapi.yaml'), 'utf8')).toMatch(
      /^info:\n(?: {2}.*\n)*? {2}version: 2\.3\.0-rc\.4$/m,
    );
    // Only version lines changed: setting the old version back restores every file byte for byte.
    version.set(dir, JSON.parse(before['package.json']!).version);
    for (const f of FILES) expect([f, readFileSync(join(dir, f), 'utf8')]).toEqual([f, before[f]]);
  });

  it('refuses what is not a release version', () => {
    for (const bad of ['1.2', 'v1.2.3', '1.2.3-dev', '01.2.3', '1.2.3-rc', '1.2.3+build']) {
      expect(() => version.set(dir, bad)).toThrow(/not a release version/);
    }
    expect(version.check(dir).problems).toEqual([]);
  });

  it('spells prereleases for Python as PEP 440 does', () => {
    expect(['1.0.0', '1.0.0-alpha.1', '1.0.0-beta.2', '1.0.0-rc.3'].map(version.pep440)).toEqual([
      '1.0.0',
      '1.0.0a1',
      '1.0.0b2',
      '1.0.0rc3',
    ]);
  });
});
