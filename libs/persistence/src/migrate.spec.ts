import {
  checkSchema,
  PendingMigrationsError,
  SCHEMA_LEVEL,
  SchemaStatus,
  SchemaTooNewError,
} from './migrate';

const status = (over: Partial<SchemaStatus>): SchemaStatus => ({
  applied: [],
  pending: [],
  unknown: [],
  requiredLevel: SCHEMA_LEVEL,
  codeLevel: SCHEMA_LEVEL,
  ...over,
});

describe('checkSchema: may this build serve on this database?', () => {
  it('serves on a schema at its own level with nothing pending', () => {
    expect(checkSchema(status({}))).toEqual({ newerCompatible: [] });
  });

  it('serves on a schema a newer release expanded (unknown migrations, level unchanged) and names them', () => {
    expect(checkSchema(status({ unknown: ['AddThing1899999999999'] }))).toEqual({
      newerCompatible: ['AddThing1899999999999'],
    });
  });

  it('serves on a schema whose required level is below its own (an older contract)', () => {
    expect(checkSchema(status({ requiredLevel: 1, codeLevel: 3 }))).toEqual({ newerCompatible: [] });
  });

  it('refuses a schema a newer release contracted past it, saying what to do', () => {
    const run = () =>
      checkSchema(status({ requiredLevel: 3, codeLevel: 2, unknown: ['DropOldColumn1899999999999'] }));
    expect(run).toThrow(SchemaTooNewError);
    expect(run).toThrow(/needs level 3 and this build understands level 2/);
    expect(run).toThrow(/DropOldColumn1899999999999/);
    expect(run).toThrow(/restore the backup taken before the upgrade/);
  });

  it('refuses pending migrations first, naming them and `mango migrate`', () => {
    const run = () => checkSchema(status({ pending: ['A1', 'B2'], requiredLevel: null }));
    expect(run).toThrow(PendingMigrationsError);
    expect(run).toThrow('the database has 2 pending migrations (A1, B2): run `mango migrate`');
  });

  it('a database from before the compatibility table (required level unknown) only needs its migrations', () => {
    expect(checkSchema(status({ requiredLevel: null }))).toEqual({ newerCompatible: [] });
  });
});
