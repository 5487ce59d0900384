import type { SessionWorkspace } from '@mango/adapter-docker';
import { classify } from './volumes-main';

const ENV = 'env_01JD8X3W5K9Q2V7B6N4M0P1R2S';
const OTHER = 'env_01JD8X3W5K9Q2V7B6N4M0P1R2T';
const SID = 'sesn_01JD8X3W5K9Q2V7B6N4M0P1R2S';
const ws = (over: Partial<SessionWorkspace>): SessionWorkspace => ({
  kind: 'volume',
  name: `mango-session-${SID.toLowerCase()}`,
  sessionId: SID,
  environmentId: ENV,
  inUse: false,
  ...over,
});

describe('mango-worker volumes: only a deleted Session of this Environment with no container is an orphan', () => {
  it.each([
    ['deleted, unused', ws({}), 'deleted', 'orphan'],
    ['deleted, still mounted', ws({ inUse: true }), 'deleted', 'in_use'],
    ['live', ws({}), { environmentId: ENV }, 'live'],
    ['live and mounted', ws({ inUse: true }), { environmentId: ENV }, 'in_use'],
    ['labelled for another Environment', ws({ environmentId: OTHER }), 'deleted', 'other_environment'],
    ['an unlabelled volume', ws({ environmentId: null }), 'deleted', 'unlabelled'],
    [
      'a directory whose Session is deleted',
      ws({ kind: 'directory', environmentId: null, name: `/srv/${SID}` }),
      'deleted',
      'orphan',
    ],
    [
      "a directory of another Environment's Session",
      ws({ kind: 'directory', environmentId: null }),
      { environmentId: OTHER },
      'other_environment',
    ],
    ['a failed lookup', ws({}), 'unknown', 'unknown'],
  ] as const)('%s', async (_, workspace, found, state) => {
    expect(await classify(workspace, ENV, async () => found as never)).toBe(state);
  });
});
