import { readdirSync } from 'node:fs';
import { MIGRATIONS } from './index';

describe('migrations', () => {
  const files = readdirSync(__dirname).filter((f) => /^\d+-.+\.ts$/.test(f));

  it('are named <epoch-ms>-<VerbNoun>.ts with the same stamp in the class name', () => {
    for (const f of files) expect(f).toMatch(/^\d{13}-[A-Z][a-z]+[A-Z][A-Za-z]+\.ts$/);
    const expected = files.map((f) => {
      const [, stamp, name] = /^(\d{13})-(\w+)\.ts$/.exec(f)!;
      return `${name}${stamp}`;
    });
    expect(MIGRATIONS.map((m) => m.name)).toEqual(
      expected.sort((a, b) => Number(a.slice(-13)) - Number(b.slice(-13))),
    );
  });

  it('every migration file is registered, in timestamp order', () => {
    expect(MIGRATIONS).toHaveLength(files.length);
  });
});
