import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConnection, UsageError } from './connect';

describe('resolveConnection: flags, then the environment, then .mango/local.env', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mango-conn-'));
    mkdirSync(join(dir, '.mango'));
    writeFileSync(
      join(dir, '.mango/local.env'),
      '# written by npm run up\nMANGO_BASE_URL=http://127.0.0.1:8080\nMANGO_API_KEY="mango_ak_file"\nMANGO_DATABASE_URL=postgres://x\n',
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [{}, {}, { baseUrl: 'http://127.0.0.1:8080', apiKey: 'mango_ak_file' }],
    [{}, { MANGO_API_KEY: 'mango_ak_env' }, { baseUrl: 'http://127.0.0.1:8080', apiKey: 'mango_ak_env' }],
    [
      { baseUrl: 'http://flag', apiKey: 'mango_ak_flag' },
      { MANGO_BASE_URL: 'http://env', MANGO_API_KEY: 'mango_ak_env' },
      { baseUrl: 'http://flag', apiKey: 'mango_ak_flag' },
    ],
  ])('flags %j, env %j → %j', (flags, env, expected) => {
    expect(resolveConnection(flags, env, dir)).toEqual(expected);
  });

  it('without any source it is a usage error naming every way to provide one', () => {
    const empty = mkdtempSync(join(tmpdir(), 'mango-conn-empty-'));
    try {
      expect(() => resolveConnection({}, {}, empty)).toThrow(UsageError);
      expect(() => resolveConnection({}, {}, empty)).toThrow(/--base-url.*MANGO_BASE_URL.*local\.env/);
      expect(() => resolveConnection({ baseUrl: 'http://x' }, {}, empty)).toThrow(UsageError);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
