import { join } from 'node:path';
import { importCycles } from './import-cycles';

const ROOT = join(__dirname, '../..');

describe('import circles, type-only edges included (tools/lint/import-cycles.ts)', () => {
  it('finds a circle made only of `import type` edges (the fixture)', () => {
    expect(importCycles(ROOT, ['tools/lint/fixtures/src'])).toEqual([
      ['tools/lint/fixtures/src/cycle-a.ts', 'tools/lint/fixtures/src/cycle-b.ts'],
      ['tools/lint/fixtures/src/type-cycle-a.ts', 'tools/lint/fixtures/src/type-cycle-b.ts'],
    ]);
  });

  it('libs/ and apps/ have none', () => {
    expect(importCycles(ROOT, ['libs', 'apps'])).toEqual([]);
  });
});
