import { pgConnectionEnv, pgToolCandidates, pgToolMajor } from './pg-tools';

describe('pgConnectionEnv', () => {
  it.each([
    [
      'postgres://mango:s%40cret@db.example:6543/mango?sslmode=verify-full',
      {
        PGHOST: 'db.example',
        PGPORT: '6543',
        PGUSER: 'mango',
        PGPASSWORD: 's@cret',
        PGDATABASE: 'mango',
        PGSSLMODE: 'verify-full',
      },
    ],
    ['postgresql://u@127.0.0.1/db', { PGHOST: '127.0.0.1', PGUSER: 'u', PGDATABASE: 'db' }],
    ['postgres://u@[::1]:5432/db', { PGHOST: '::1', PGPORT: '5432', PGUSER: 'u', PGDATABASE: 'db' }],
    ['postgres:///db?host=/run/postgresql', { PGHOST: '/run/postgresql', PGDATABASE: 'db' }],
  ])('%s becomes libpq variables (the password never in an argument)', (url, env) => {
    expect(pgConnectionEnv(url)).toEqual(env);
  });

  it('refuses what is not a postgres URL, without echoing it', () => {
    expect(() => pgConnectionEnv('mysql://u:pw@h/db')).toThrow(/must be a postgres:\/\/ URL/);
    expect(() => pgConnectionEnv('not a url pw')).toThrow(/^MANGO_DATABASE_URL is not a valid/);
  });
});

describe('pgToolMajor', () => {
  it.each([
    ['pg_dump (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n', 15],
    ['pg_restore (PostgreSQL) 17.2\n', 17],
    ['pg_dump (PostgreSQL) 9.6.24\n', 9],
    ['something else', null],
  ])('%j → %s', (out, major) => expect(pgToolMajor(out)).toBe(major));
});

describe('pgToolCandidates', () => {
  it('MANGO_PG_BIN_DIR alone when set, else the Debian directory of the major, then PATH', () => {
    expect(pgToolCandidates('pg_dump', 15, { MANGO_PG_BIN_DIR: '/opt/pg/bin', PATH: '/usr/bin' })).toEqual([
      '/opt/pg/bin/pg_dump',
    ]);
    expect(pgToolCandidates('pg_restore', 16, { PATH: '/usr/local/bin:/usr/bin' })).toEqual([
      '/usr/lib/postgresql/16/bin/pg_restore',
      '/usr/local/bin/pg_restore',
      '/usr/bin/pg_restore',
    ]);
  });
});
