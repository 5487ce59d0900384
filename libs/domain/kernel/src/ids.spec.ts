import { DEFAULT_WORKSPACE_ID, ID_PREFIXES, idPattern, IdKind, isId } from './ids';

const ULID = '01JZ3F5Q8V6TBN0XGKRM2WD4HC';

describe('the id format (one home for every copy of the regex)', () => {
  it.each(Object.keys(ID_PREFIXES) as IdKind[])('%s: prefix + 26-character ULID, anchored', (kind) => {
    const id = ID_PREFIXES[kind] + ULID;
    expect(idPattern(kind).test(id)).toBe(true);
    expect(isId(kind, id)).toBe(true);
    expect(idPattern(kind).test(`x${id}`)).toBe(false);
    expect(idPattern(kind).test(`${id}0`)).toBe(false);
    expect(idPattern(kind).test(ID_PREFIXES[kind] + ULID.replace('Q', 'U'))).toBe(false); // U is not Crockford
  });

  it('keeps kinds apart and returns the same pattern object per kind', () => {
    expect(idPattern('agent').test(`env_${ULID}`)).toBe(false);
    expect(idPattern('agent')).toBe(idPattern('agent'));
  });

  it('accepts wrkspc_default as a workspace id, but the ULID pattern does not', () => {
    expect(isId('workspace', DEFAULT_WORKSPACE_ID)).toBe(true);
    expect(idPattern('workspace').test(DEFAULT_WORKSPACE_ID)).toBe(false);
  });
});
