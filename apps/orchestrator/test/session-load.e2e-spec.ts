import { SessionStack, STACK_TIMEOUT_MS, startSessionStack } from './support';
import { HttpClient, ApiUnderTest, ScriptedModelServer } from '@mango/testing';

/**
 * Load never fails a Session: many Sessions sent at once to one orchestrator whose pool and slots are
 * deliberately far smaller than the load (3 connections, 4 model steps, 2 database steps at once). Excess
 * work queues — in the Temporal task queue and the pool — and every Session still reaches
 * idle{end_turn} with no session.error. Its workflow cache holds 4 of them (MANGO_MAX_CACHED_WORKFLOWS), so
 * an idle Session's next turn runs in a workflow evicted and replayed from its history. Not timed: the
 * assertions are about outcomes only.
 */

const SESSIONS = 100;

describe('a burst of Sessions against a small orchestrator (real API, Temporal, PostgreSQL, scripted model)', () => {
  let api: ApiUnderTest;
  let stack: SessionStack;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  const ids: string[] = [];

  beforeAll(async () => {
    stack = await startSessionStack('load', {
      apiEnv: { MANGO_DB_POOL_SIZE: '10' },
      orchestratorEnv: {
        MANGO_DB_POOL_SIZE: '3',
        MANGO_MAX_CONCURRENT_TURNS: '4',
        MANGO_MAX_CONCURRENT_DB_STEPS: '2',
        MANGO_MAX_CACHED_WORKFLOWS: '4',
      },
    });
    ({ api, model, ws } = stack);
  }, STACK_TIMEOUT_MS);

  afterAll(() => stack?.close());

  /** Sends every Session one user.message at once (text by index); each is admitted. */
  async function sendToAll(text: (i: number) => string): Promise<void> {
    const sent = await Promise.all(
      ids.map((id, i) =>
        ws.post(`/v1/sessions/${id}/events`, {
          events: [{ type: 'user.message', content: [{ type: 'text', text: text(i) }] }],
        }),
      ),
    );
    expect(sent.map((r) => r.status)).toEqual(ids.map(() => 200));
  }

  /** How many Sessions have gone idle at least `turns` times, once all have or 5 minutes passed. */
  async function sessionsIdleAtLeast(turns: number): Promise<number> {
    const deadline = Date.now() + 300_000;
    for (;;) {
      const [row] = await api.sql<{ n: string }>(
        `SELECT count(*) AS n FROM (SELECT session_id FROM session_events WHERE type = 'session.status_idle'
           GROUP BY session_id HAVING count(*) >= $1) AS ended`,
        [turns],
      );
      const ended = Number(row!.n);
      if (ended >= SESSIONS || Date.now() > deadline) return ended;
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  it(`${SESSIONS} Sessions with one message each, sent at once: every one ends idle{end_turn}, none errors`, async () => {
    model.script(
      ...Array.from({ length: SESSIONS }, () => (body: any) => ({
        content: [{ type: 'text', text: `echo: ${body.messages[0].content[0].text}` }],
      })),
    );
    const agent = (await ws.post('/v1/agents', { name: 'load', model: 'claude-sonnet-4-6' })).body.id;
    const env = (await ws.post('/v1/environments', { name: 'load' })).body.id;
    for (let i = 0; i < SESSIONS; i++)
      ids.push((await ws.post('/v1/sessions', { agent, environment_id: env })).body.id);

    await sendToAll((i) => `hello ${i}`);

    // Up to 5 minutes on a loaded machine.
    expect(await sessionsIdleAtLeast(1)).toBe(SESSIONS);

    const errors = await api.sql(`SELECT session_id, body FROM session_events WHERE type = 'session.error'`);
    expect(errors).toEqual([]);
    const idles = await api.sql<{ session_id: string; stop: string; n: string }>(
      `SELECT session_id, body->'stop_reason'->>'type' AS stop, count(*) OVER (PARTITION BY session_id) AS n
         FROM session_events WHERE type = 'session.status_idle' ORDER BY session_id`,
    );
    expect(idles.map((r) => r.session_id)).toEqual([...ids].sort());
    expect(new Set(idles.map((r) => `${r.stop}/${r.n}`))).toEqual(new Set(['end_turn/1']));

    // Each Session got its own reply exactly once, and the projection says idle.
    const replies = await api.sql<{ session_id: string; text: string }>(
      `SELECT session_id, body->'content'->0->>'text' AS text FROM session_events WHERE type = 'agent.message'`,
    );
    expect(replies).toHaveLength(SESSIONS);
    const byId = new Map(replies.map((r) => [r.session_id, r.text]));
    ids.forEach((id, i) => expect(byId.get(id)).toBe(`echo: hello ${i}`));
    const statuses = await api.sql<{ status: string; n: string }>(
      'SELECT status, count(*) AS n FROM sessions GROUP BY status',
    );
    expect(statuses).toEqual([{ status: 'idle', n: String(SESSIONS) }]);
    expect(model.requests).toHaveLength(SESSIONS);
  }, 420_000);

  it('a second message to each of them (their workflows evicted from the 4-workflow cache): each turn replays and ends once', async () => {
    expect(ids).toHaveLength(SESSIONS);
    model.script(
      ...Array.from({ length: SESSIONS }, () => (body: any) => ({
        // The model sees the whole conversation: the replayed workflow carried the first turn.
        content: [
          {
            type: 'text',
            text: `again: ${body.messages.map((m: any) => m.content[0].text).join(' | ')}`,
          },
        ],
      })),
    );
    await sendToAll((i) => `second ${i}`);
    expect(await sessionsIdleAtLeast(2)).toBe(SESSIONS);
    expect(await api.sql(`SELECT session_id, body FROM session_events WHERE type = 'session.error'`)).toEqual(
      [],
    );
    const replies = await api.sql<{ session_id: string; text: string }>(
      `SELECT session_id, body->'content'->0->>'text' AS text FROM session_events
        WHERE type = 'agent.message' AND body->'content'->0->>'text' LIKE 'again:%'`,
    );
    expect(replies).toHaveLength(SESSIONS);
    const byId = new Map(replies.map((r) => [r.session_id, r.text]));
    ids.forEach((id, i) => expect(byId.get(id)).toBe(`again: hello ${i} | echo: hello ${i} | second ${i}`));
    const idles = await api.sql<{ stop: string; n: string }>(
      `SELECT body->'stop_reason'->>'type' AS stop, count(*) AS n FROM session_events
        WHERE type = 'session.status_idle' GROUP BY 1`,
    );
    expect(idles).toEqual([{ stop: 'end_turn', n: String(SESSIONS * 2) }]);
    expect(model.requests).toHaveLength(SESSIONS * 2);
  }, 420_000);
});
