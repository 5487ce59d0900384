import { SCHEMA_LEVEL } from '@mango/persistence';
import { parseHeader, parseManifest, restoreSchemaVerdict } from './manifest';

const schema = { required_level: 1, code_level: 1, migrations: ['A1', 'B2'] };

describe('restoreSchemaVerdict', () => {
  it('restores the same schema, and an older one (its missing migrations are for mango migrate)', () => {
    expect(restoreSchemaVerdict(schema, ['A1', 'B2'], 1)).toEqual({ pending: [], newerCompatible: [] });
    expect(restoreSchemaVerdict({ ...schema, migrations: ['A1'] }, ['A1', 'B2'], 1)).toEqual({
      pending: ['B2'],
      newerCompatible: [],
    });
  });

  it('restores a schema a newer release only expanded (as the start-up check does)', () => {
    expect(
      restoreSchemaVerdict({ ...schema, migrations: ['A1', 'B2', 'C3'] }, ['A1', 'B2'], 1).newerCompatible,
    ).toEqual(['C3']);
  });

  it('refuses a schema contracted past this build with the start-up check’s message', () => {
    expect(() =>
      restoreSchemaVerdict(
        { ...schema, required_level: SCHEMA_LEVEL + 1, migrations: ['A1', 'Z9'] },
        ['A1'],
        SCHEMA_LEVEL,
      ),
    ).toThrow(
      new RegExp(
        `refusing to restore: the database schema needs level ${SCHEMA_LEVEL + 1} and this build understands level ${SCHEMA_LEVEL} \\(migrated by a newer release: Z9\\)`,
      ),
    );
  });
});

describe('parsing the archive’s JSON members (input: strict)', () => {
  const header = {
    format: 'mango-backup',
    version: 1,
    created_at: 'x',
    schema,
    database: { pg_dump_major: 15, server_major: 15 },
    keyring: true,
  };
  const sha = 'a'.repeat(64);
  const manifest = {
    format: 'mango-backup',
    version: 1,
    created_at: 'x',
    schema,
    counts: { dump_parts: 1, dump_bytes: 3, objects: 1, object_bytes: 2, keyring_keys: 1 },
    database: { sha256: sha, bytes: 3, parts: [{ bytes: 3, sha256: sha }] },
    objects: [{ key: 'workspaces/w/files/f', bytes: 2, sha256: sha, content_type: 'text/plain' }],
    vanished: [],
    keyring: { sha256: sha, key_ids: ['k1'] },
  };
  const j = (v: unknown) => Buffer.from(JSON.stringify(v));

  it('accepts what backup writes', () => {
    expect(parseHeader(j(header)).schema).toEqual(schema);
    expect(parseManifest(j(manifest)).objects).toHaveLength(1);
  });

  it.each([
    ['not JSON', Buffer.from('{'), /not JSON/],
    ['another format', j({ ...manifest, format: 'x' }), /not a Mango backup/],
    [
      'a newer format version',
      j({ ...manifest, version: 2 }),
      /format version 2; this build reads version 1/,
    ],
    [
      'a bad digest',
      j({ ...manifest, database: { ...manifest.database, sha256: 'zz' } }),
      /invalid database/,
    ],
    ['a key twice', j({ ...manifest, objects: [manifest.objects[0], manifest.objects[0]] }), /a key twice/],
    [
      'a content type with a newline',
      j({ ...manifest, objects: [{ ...manifest.objects[0], content_type: 'a\r\nb' }] }),
      /objects list/,
    ],
    ['negative counts', j({ ...manifest, counts: { ...manifest.counts, objects: -1 } }), /invalid counts/],
  ])('refuses a manifest with %s', (_l, text, message) => {
    expect(() => parseManifest(text)).toThrow(message);
  });
});
