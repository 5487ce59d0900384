import { DomainError } from '@mango/domain-kernel';
import { parseMemoryAttachments } from './memory-attachment';
import { ancestorPaths, normalizeMemoryPath, normalizePathPrefix } from './memory-path';
import { memoryStoreSlug } from './memory-store-name';

describe('Memory paths', () => {
  it.each([
    ['/notes.md', '/notes.md'],
    ['/a/b/c.txt', '/a/b/c.txt'],
    ['/Case/Kept', '/Case/Kept'],
    ['/cafe\u0301', '/caf\u00e9'], // NFC
    ['/a..b/.hidden', '/a..b/.hidden'],
  ])('accepts %j as %j', (raw, expected) => {
    expect(normalizeMemoryPath(raw)).toBe(expected);
  });

  it.each([
    ['relative', 'notes.md', /start with/],
    ['empty', '', /start with/],
    ['root only', '/', /empty segments/],
    ['trailing slash', '/a/', /empty segments/],
    ['double slash', '/a//b', /empty segments/],
    ['dot segment', '/a/./b', /"\." or "\.\."/],
    ['traversal', '/a/../../etc/passwd', /"\." or "\.\."/],
    ['leading traversal', '/..', /"\." or "\.\."/],
    ['NUL', '/a\u0000b', /control/],
    ['newline', '/a\nb', /control/],
    ['bidi override', '/a\u202eb', /control or format/],
    ['line separator', '/a\u2028b', /control/],
    ['too long', `/${'x'.repeat(1024)}`, /1024 bytes/],
    ['too deep', `/${Array(21).fill('d').join('/')}`, /20 segments/],
    ['not a string', 42, /must be a string/],
  ])('refuses %s', (_name, raw, message) => {
    expect(() => normalizeMemoryPath(raw)).toThrow(message);
    try {
      normalizeMemoryPath(raw);
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
    }
  });

  it('prefixes end with a slash and are valid paths otherwise', () => {
    expect(normalizePathPrefix(undefined)).toBe('/');
    expect(normalizePathPrefix('/a/b/')).toBe('/a/b/');
    expect(() => normalizePathPrefix('/a')).toThrow(/end with/);
    expect(() => normalizePathPrefix('/../')).toThrow(/"\." or "\.\."/);
  });

  it('lists proper ancestors', () => {
    expect(ancestorPaths('/a/b/c')).toEqual(['/a', '/a/b']);
    expect(ancestorPaths('/a')).toEqual([]);
  });

  it('slugs store names for mount paths', () => {
    expect(memoryStoreSlug('User Preferences!', 'x')).toBe('user-preferences');
    expect(memoryStoreSlug('***', 'memstore_1')).toBe('memstore_1');
  });
});

describe('Session memory_store resources', () => {
  const id = 'memstore_01JD2Y3QX9V5M8K7R6T4W2P0AB';
  it('defaults access to read_write and keeps instructions', () => {
    expect(
      parseMemoryAttachments([{ type: 'memory_store', memory_store_id: id, instructions: 'hi' }]),
    ).toEqual([{ memoryStoreId: id, access: 'read_write', instructions: 'hi' }]);
  });
  it.each([
    ['a file resource', [{ type: 'file', file_id: 'file_x' }], /only memory_store/],
    ['a bad id', [{ type: 'memory_store', memory_store_id: 'file_x' }], /memstore_/],
    ['a bad access', [{ type: 'memory_store', memory_store_id: id, access: 'write' }], /access/],
    [
      'a duplicate',
      [
        { type: 'memory_store', memory_store_id: id },
        { type: 'memory_store', memory_store_id: id },
      ],
      /twice/,
    ],
    ['nine stores', Array(9).fill({ type: 'memory_store', memory_store_id: id }), /at most 8/],
    ['an unknown field', [{ type: 'memory_store', memory_store_id: id, mount_path: '/x' }], /unknown field/],
  ])('refuses %s', (_n, raw, message) => {
    expect(() => parseMemoryAttachments(raw)).toThrow(message);
  });
});
