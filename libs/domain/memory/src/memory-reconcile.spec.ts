import {
  LocalMemoryState,
  planDeletions,
  planPull,
  planPush,
  RemoteMemoryState,
  SyncedMemory,
} from './memory-reconcile';

const base = (entries: Record<string, [string, string]>) =>
  new Map<string, SyncedMemory>(Object.entries(entries).map(([p, [id, sha]]) => [p, { id, sha }]));
const remote = (entries: Record<string, [string, string]>) =>
  new Map<string, RemoteMemoryState>(
    Object.entries(entries).map(([p, [id, sha]]) => [p, { id, path: p, sha }]),
  );
const local = (entries: Record<string, string>) =>
  new Map<string, LocalMemoryState>(Object.entries(entries).map(([p, sha]) => [p, { sha }]));

describe('planPull: remote wins', () => {
  it.each([
    // [case, baseline, remote, local, expected steps]
    ['unchanged everywhere: nothing', { '/a': ['m1', 's1'] }, { '/a': ['m1', 's1'] }, { '/a': 's1' }, []],
    [
      'unchanged remotely, edited locally: nothing (push handles it)',
      { '/a': ['m1', 's1'] },
      { '/a': ['m1', 's1'] },
      { '/a': 's2' },
      [],
    ],
    [
      'new remotely, absent locally: download',
      {},
      { '/a': ['m1', 's1'] },
      {},
      [{ kind: 'download', path: '/a', id: 'm1', conflict: false }],
    ],
    [
      'new remotely, same content locally: adopt',
      {},
      { '/a': ['m1', 's1'] },
      { '/a': 's1' },
      [{ kind: 'adopt', path: '/a', id: 'm1', sha: 's1' }],
    ],
    [
      'new remotely, other content locally: download over it (conflict)',
      {},
      { '/a': ['m1', 's1'] },
      { '/a': 's9' },
      [{ kind: 'download', path: '/a', id: 'm1', conflict: true }],
    ],
    [
      'changed remotely, untouched locally: download',
      { '/a': ['m1', 's1'] },
      { '/a': ['m1', 's2'] },
      { '/a': 's1' },
      [{ kind: 'download', path: '/a', id: 'm1', conflict: false }],
    ],
    [
      'changed remotely and locally: download, the local edit is lost (conflict)',
      { '/a': ['m1', 's1'] },
      { '/a': ['m1', 's2'] },
      { '/a': 's3' },
      [{ kind: 'download', path: '/a', id: 'm1', conflict: true }],
    ],
    [
      'changed remotely, deleted locally: download',
      { '/a': ['m1', 's1'] },
      { '/a': ['m1', 's2'] },
      {},
      [{ kind: 'download', path: '/a', id: 'm1', conflict: false }],
    ],
    [
      'same digest, new id (re-created remotely): adopt the new id',
      { '/a': ['m1', 's1'] },
      { '/a': ['m2', 's1'] },
      { '/a': 's1' },
      [{ kind: 'adopt', path: '/a', id: 'm2', sha: 's1' }],
    ],
    [
      'deleted remotely, untouched locally: remove',
      { '/a': ['m1', 's1'] },
      {},
      { '/a': 's1' },
      [{ kind: 'remove', path: '/a', conflict: false }],
    ],
    [
      'deleted remotely, edited locally: remove anyway (conflict)',
      { '/a': ['m1', 's1'] },
      {},
      { '/a': 's2' },
      [{ kind: 'remove', path: '/a', conflict: true }],
    ],
    [
      'deleted remotely and locally: forget',
      { '/a': ['m1', 's1'] },
      {},
      {},
      [{ kind: 'forget', path: '/a' }],
    ],
    [
      'a local file never synchronized and absent remotely: nothing (push creates it)',
      {},
      {},
      { '/a': 's1' },
      [],
    ],
  ] as const)('%s', (_case, b, r, l, expected) => {
    expect(planPull(base(b as never), remote(r as never), local(l as never))).toEqual(expected);
  });

  it('lists remote paths first, in listing order, then the remotely deleted ones', () => {
    const steps = planPull(
      base({ '/gone': ['m0', 's0'] }),
      remote({ '/z': ['m1', 's1'], '/a': ['m2', 's2'] }),
      local({}),
    );
    expect(steps.map((s) => s.path)).toEqual(['/z', '/a', '/gone']);
  });
});

describe('planPush: local creates and updates with the baseline digest as precondition', () => {
  it.each([
    ['new locally: create', {}, { '/a': 's1' }, [{ kind: 'create', path: '/a' }]],
    ['unchanged: nothing', { '/a': ['m1', 's1'] }, { '/a': 's1' }, []],
    [
      'edited locally: update expecting the synchronized digest',
      { '/a': ['m1', 's1'] },
      { '/a': 's2' },
      [{ kind: 'update', path: '/a', id: 'm1', expectedSha: 's1' }],
    ],
    ['deleted locally: nothing here (planDeletions)', { '/a': ['m1', 's1'] }, {}, []],
  ] as const)('%s', (_case, b, l, expected) => {
    expect(planPush(base(b as never), local(l as never))).toEqual(expected);
  });
});

describe('planDeletions: a local deletion needs a second observation', () => {
  it.each([
    ['first pass without the file: wait', {}, [{ kind: 'wait', path: '/a', seen: 1 }]],
    [
      'second pass in a row: delete expecting the synchronized digest',
      { '/a': 1 },
      [{ kind: 'delete', path: '/a', id: 'm1', expectedSha: 's1', seen: 2 }],
    ],
    [
      'a later pass (an earlier delete failed): delete again',
      { '/a': 4 },
      [{ kind: 'delete', path: '/a', id: 'm1', expectedSha: 's1', seen: 5 }],
    ],
  ] as const)('%s', (_case, missing, expected) => {
    expect(planDeletions(base({ '/a': ['m1', 's1'] }), local({}), new Map(Object.entries(missing)))).toEqual(
      expected,
    );
  });

  it('never deletes a path whose file exists, whatever was counted before', () => {
    expect(planDeletions(base({ '/a': ['m1', 's1'] }), local({ '/a': 's2' }), new Map([['/a', 7]]))).toEqual(
      [],
    );
  });

  it('never deletes what was never synchronized', () => {
    expect(planDeletions(base({}), local({}), new Map([['/a', 3]]))).toEqual([]);
  });
});
