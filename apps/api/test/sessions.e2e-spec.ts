import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * Sessions and the event log over a real API process: frozen Agent snapshots, gapless sequences, and the
 * one transaction that admits runnable input, updates the projection, creates or coalesces Session Work
 * and writes the outbox (docs/architecture.md, The Session path).
 */
describe('Sessions and events (real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let agentId: string;
  let envId: string;
  let apiKey: string;

  beforeAll(async () => {
    api = await startApi('sessions');
    apiKey = (await api.issueKey('wrkspc_default')).api_key;
    ws = httpClient(api.url, apiKey);
    agentId = (
      await ws.post('/v1/agents', { name: 'coder', model: 'claude-sonnet-4-6', system: 'v1 prompt' })
    ).body.id;
    await ws.post(`/v1/agents/${agentId}`, { system: 'v2 prompt' });
    envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
  });
  afterAll(() => api.close());

  const message = (text: string) => ({ type: 'user.message', content: [{ type: 'text', text }] });

  it('freezes the chosen Agent version (with overrides) at creation; later Agent updates do not leak in', async () => {
    const latest = await ws.post('/v1/sessions', { agent: agentId, environment_id: envId, title: 't' });
    expect(latest.status).toBe(201);
    expect(latest.body).toMatchObject({
      type: 'session',
      status: 'idle',
      title: 't',
      agent: { id: agentId, version: 2, system: 'v2 prompt' },
    });
    const pinned = await ws.post('/v1/sessions', {
      agent: { type: 'agent', id: agentId, version: 1 },
      environment_id: envId,
    });
    expect(pinned.body.agent).toMatchObject({ version: 1, system: 'v1 prompt' });
    const overridden = await ws.post('/v1/sessions', {
      agent: { type: 'agent_with_overrides', id: agentId, system: 'override' },
      environment_id: envId,
    });
    expect(overridden.body.agent).toMatchObject({ version: 2, system: 'override' });
    await ws.post(`/v1/agents/${agentId}`, { system: 'v3 prompt' });
    expect((await ws.get(`/v1/sessions/${latest.body.id}`)).body.agent.system).toBe('v2 prompt');
  });

  it('admits input in one transaction: gapless sequence, running projection, one coalesced Work item, outbox rows', async () => {
    const s = (
      await ws.post('/v1/sessions', {
        agent: agentId,
        environment_id: envId,
        initial_events: [message('one')],
      })
    ).body;
    expect(s.status).toBe('running');
    await ws.post(`/v1/sessions/${s.id}/events`, { events: [message('two'), message('three')] });
    const events = await api.sql<{ seq: string; type: string }>(
      'SELECT seq, type FROM session_events WHERE session_id = $1 ORDER BY seq',
      [s.id],
    );
    expect(events.map((e) => Number(e.seq))).toEqual([1, 2, 3]);
    const outbox = await api.sql<{ event_seq: string }>(
      'SELECT event_seq FROM outbox WHERE session_id = $1 ORDER BY id',
      [s.id],
    );
    expect(outbox.map((o) => Number(o.event_seq))).toEqual([1, 2, 3]);
    const work = await api.sql<{ state: string }>('SELECT state FROM work_items WHERE session_id = $1', [
      s.id,
    ]);
    expect(work).toEqual([{ state: 'queued' }]);

    // The worker side sees exactly one Session Work item for it; after Stop, new input makes a new activation.
    const [{ id: workId }] = await api.sql<{ id: string }>(
      'SELECT id FROM work_items WHERE session_id = $1',
      [s.id],
    );
    expect((await ws.post(`/v1/environments/${envId}/work/${workId}/stop`, { force: true })).status).toBe(
      204,
    );
    await ws.post(`/v1/sessions/${s.id}/events`, { events: [message('four')] });
    const after = await api.sql<{ state: string }>(
      'SELECT state FROM work_items WHERE session_id = $1 ORDER BY id',
      [s.id],
    );
    expect(after).toEqual([{ state: 'stopped' }, { state: 'queued' }]);
  });

  it('concurrent senders never produce a gap or a duplicate sequence', async () => {
    const s = (await ws.post('/v1/sessions', { agent: agentId, environment_id: envId })).body;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ws.post(`/v1/sessions/${s.id}/events`, { events: [message(`m${i}`)] }),
      ),
    );
    const seqs = await api.sql<{ seq: string }>(
      'SELECT seq FROM session_events WHERE session_id = $1 ORDER BY seq',
      [s.id],
    );
    expect(seqs.map((r) => Number(r.seq))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await api.sql('SELECT id FROM work_items WHERE session_id = $1', [s.id])).toHaveLength(1);
  });

  it('refuses a revoked Workspace key at once (401) on event append, though the key was just used; nothing is appended, and a missing Session is 401 too', async () => {
    const issued = await api.issueKey('wrkspc_default');
    const mine = httpClient(api.url, issued.api_key);
    const s = (await ws.post('/v1/sessions', { agent: agentId, environment_id: envId })).body;
    // The append route answers from the guard's principal cache, so this key is cached now.
    expect((await mine.post(`/v1/sessions/${s.id}/events`, { events: [message('before')] })).status).toBe(
      200,
    );

    await api.revokeKey(issued.id);
    const refused = await mine.post(`/v1/sessions/${s.id}/events`, { events: [message('after')] });
    expect(refused.status).toBe(401);
    expect(refused.body.error.type).toBe('authentication_error');
    const missing = await mine.post('/v1/sessions/sesn_01M9178R3J3E6SQP24V9MT4BHS/events', {
      events: [message('after')],
    });
    expect(missing.status).toBe(401);
    const types = await api.sql<{ type: string; body: { content: Array<{ text: string }> } }>(
      'SELECT type, body FROM session_events WHERE session_id = $1 ORDER BY seq',
      [s.id],
    );
    expect(types.map((e) => e.body.content?.[0]?.text)).toEqual(['before']);
    // A live key still appends to the same Session, right after the refused one (the row lock was released).
    expect((await ws.post(`/v1/sessions/${s.id}/events`, { events: [message('live')] })).status).toBe(200);
  });

  it('lists events in order with types, paging and order; echoes persisted events on send', async () => {
    const s = (await ws.post('/v1/sessions', { agent: agentId, environment_id: envId })).body;
    const sent = await ws.post(`/v1/sessions/${s.id}/events`, {
      events: [message('a'), { type: 'user.interrupt' }, message('b')],
    });
    expect(sent.body.data.map((e: { type: string }) => e.type)).toEqual([
      'user.message',
      'user.interrupt',
      'user.message',
    ]);
    expect(sent.body.data[0].id).toMatch(/^sevt_/);
    const page1 = await ws.get(`/v1/sessions/${s.id}/events?limit=2`);
    expect(page1.body.data.map((e: { content?: Array<{ text: string }> }) => e.content?.[0]?.text)).toEqual([
      'a',
      undefined,
    ]);
    const page2 = await ws.get(`/v1/sessions/${s.id}/events?limit=2&page=${page1.body.next_page}`);
    expect(page2.body.data[0].content[0].text).toBe('b');
    expect(page2.body.next_page).toBeNull();
    expect((await ws.get(`/v1/sessions/${s.id}/events?types[]=user.interrupt`)).body.data).toHaveLength(1);
    expect(
      (await ws.get(`/v1/sessions/${s.id}/events?order=desc&limit=1`)).body.data[0].content[0].text,
    ).toBe('b');
  });

  it('updates title, metadata and budget with a session.updated event carrying only the changes', async () => {
    const s = (
      await ws.post('/v1/sessions', {
        agent: agentId,
        environment_id: envId,
        budget: { type: 'limit', max_list_cost: { amount: '1000', currency: 'USD' } },
      })
    ).body;
    const up = await ws.post(`/v1/sessions/${s.id}`, {
      title: 'renamed',
      budget: { type: 'limit', max_list_cost: { amount: '5000', currency: 'USD' } },
    });
    expect(up.body).toMatchObject({ title: 'renamed', budget: { max_list_cost: { amount: '5000' } } });
    const events = (await ws.get(`/v1/sessions/${s.id}/events`)).body.data;
    expect(events).toEqual([
      expect.objectContaining({ type: 'session.updated', title: 'renamed', budget: expect.anything() }),
    ]);
    expect(events[0]).not.toHaveProperty('metadata');
    const removed = await ws.post(`/v1/sessions/${s.id}`, { budget: null });
    expect(removed.body.budget).toBeNull();
    const readd = await ws.post(`/v1/sessions/${s.id}`, {
      budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } },
    });
    expect(readd.status).toBe(400);
  });

  it("changes the agent's tools while idle (session.updated with the new snapshot); 409 while running; bad tools 400", async () => {
    const idle = (await ws.post('/v1/sessions', { agent: agentId, environment_id: envId })).body;
    const tools = [
      { type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_allow' } } },
    ];
    const up = await ws.post(`/v1/sessions/${idle.id}`, { agent: { tools } });
    expect(up.status).toBe(200);
    expect(up.body.agent.tools).toEqual([expect.objectContaining({ type: 'agent_toolset_20260401' })]);
    expect(up.body.agent).toMatchObject({ id: agentId, system: idle.agent.system, model: idle.agent.model });
    const events = (await ws.get(`/v1/sessions/${idle.id}/events`)).body.data;
    expect(events).toEqual([expect.objectContaining({ type: 'session.updated', agent: up.body.agent })]);
    // The same tools again: nothing changes, no event.
    await ws.post(`/v1/sessions/${idle.id}`, { agent: { tools: up.body.agent.tools } });
    expect((await ws.get(`/v1/sessions/${idle.id}/events`)).body.data).toHaveLength(1);
    for (const bad of [
      { system: 'no' },
      { tools: [{ type: 'nope' }] },
      { mcp_servers: [{ type: 'url', name: 'x', url: 'https://mcp.example.com' }] },
    ]) {
      const res = await ws.post(`/v1/sessions/${idle.id}`, { agent: bad });
      expect(res.status).toBe(400);
    }
    expect((await ws.get(`/v1/sessions/${idle.id}`)).body.agent).toEqual(up.body.agent);

    const running = (
      await ws.post('/v1/sessions', {
        agent: agentId,
        environment_id: envId,
        initial_events: [message('go')],
      })
    ).body;
    expect(running.status).toBe('running');
    const refused = await ws.post(`/v1/sessions/${running.id}`, { agent: { tools } });
    expect(refused.status).toBe(409);
    expect((await ws.get(`/v1/sessions/${running.id}`)).body.agent.tools).toEqual(running.agent.tools);
  });

  it("lists the primary Thread, whose events and stream are the Session's", async () => {
    const s = (
      await ws.post('/v1/sessions', { agent: agentId, environment_id: envId, initial_events: [message('t')] })
    ).body;
    const threads = await ws.get(`/v1/sessions/${s.id}/threads`);
    const primary = 'sthr_' + s.id.slice('sesn_'.length);
    expect(threads.body).toEqual({
      data: [
        expect.objectContaining({
          id: primary,
          type: 'session_thread',
          session_id: s.id,
          parent_thread_id: null,
          status: s.status,
        }),
      ],
      next_page: null,
    });
    expect(threads.body.data[0].agent).not.toHaveProperty('multiagent');
    expect((await ws.get(`/v1/sessions/${s.id}/threads/${primary}`)).body.id).toBe(primary);
    const events = (await ws.get(`/v1/sessions/${s.id}/threads/${primary}/events`)).body.data;
    expect(events).toEqual((await ws.get(`/v1/sessions/${s.id}/events`)).body.data);
    const res = await fetch(`${api.url}/v1/sessions/${s.id}/threads/${primary}/stream`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += Buffer.from((await reader.read()).value!).toString('utf8');
    await reader.cancel();
    expect(text).toMatch(/^id: 1\nevent: user\.message\n/);
    expect((await ws.get(`/v1/sessions/${s.id}/threads/sthr_01JD2Y3QX9V5M8K7R6T4W2P0ZZ`)).status).toBe(404);
    expect((await ws.post(`/v1/sessions/${s.id}/threads/${primary}/archive`)).status).toBe(400);
  });

  it('archive makes events 409; delete returns a tombstone, appends session.deleted, stops the Work and hides the Session', async () => {
    const s = (
      await ws.post('/v1/sessions', { agent: agentId, environment_id: envId, initial_events: [message('x')] })
    ).body;
    await ws.post(`/v1/sessions/${s.id}/archive`);
    const refused = await ws.post(`/v1/sessions/${s.id}/events`, { events: [message('late')] });
    expect(refused.status).toBe(409);
    expect((await ws.get(`/v1/sessions?limit=100`)).body.data.map((x: { id: string }) => x.id)).not.toContain(
      s.id,
    );
    expect(
      (await ws.get(`/v1/sessions?limit=100&include_archived=true`)).body.data.map(
        (x: { id: string }) => x.id,
      ),
    ).toContain(s.id);
    expect((await ws.delete(`/v1/sessions/${s.id}`)).body).toEqual({ id: s.id, type: 'session_deleted' });
    expect((await ws.get(`/v1/sessions/${s.id}`)).status).toBe(404);
    const last = await api.sql<{ type: string }>(
      'SELECT type FROM session_events WHERE session_id = $1 ORDER BY seq DESC LIMIT 1',
      [s.id],
    );
    expect(last[0]!.type).toBe('session.deleted');
    expect(
      await api.sql("SELECT state FROM work_items WHERE session_id = $1 AND state <> 'stopped'", [s.id]),
    ).toEqual([]);
  });

  it('lists with filters, order and both page directions', async () => {
    const other = (await ws.post('/v1/agents', { name: 'other', model: 'm' })).body.id;
    const mine = [];
    for (let i = 0; i < 3; i++)
      mine.push((await ws.post('/v1/sessions', { agent: other, environment_id: envId })).body.id);
    const asc = await ws.get(`/v1/sessions?agent_id=${other}&order=asc&limit=2`);
    expect(asc.body.data.map((x: { id: string }) => x.id)).toEqual(mine.slice(0, 2));
    expect(asc.body.prev_page).toBeNull();
    const next = await ws.get(`/v1/sessions?agent_id=${other}&order=asc&limit=2&page=${asc.body.next_page}`);
    expect(next.body.data.map((x: { id: string }) => x.id)).toEqual([mine[2]]);
    expect(next.body.prev_page).not.toBeNull();
    expect((await ws.get(`/v1/sessions?agent_id=${other}&statuses[]=running`)).body.data).toEqual([]);
    expect((await ws.get(`/v1/sessions?agent_id=${other}&statuses[]=idle`)).body.data).toHaveLength(3);
  });

  it('prev_page sent back with the same order returns the previous page in that order, in both orders', async () => {
    const agent = (await ws.post('/v1/agents', { name: 'pager', model: 'm' })).body.id;
    const made: string[] = [];
    for (let i = 0; i < 5; i++)
      made.push((await ws.post('/v1/sessions', { agent, environment_id: envId })).body.id);
    for (const order of ['asc', 'desc'] as const) {
      const ids = order === 'asc' ? made : [...made].reverse();
      const list = (page?: string) =>
        ws.get(`/v1/sessions?agent_id=${agent}&order=${order}&limit=2${page ? `&page=${page}` : ''}`);
      const pages = [await list()];
      while (pages[pages.length - 1]!.body.next_page)
        pages.push(await list(pages[pages.length - 1]!.body.next_page));
      const idsOf = (r: { body: { data: Array<{ id: string }> } }) => r.body.data.map((x) => x.id);
      expect(pages.map(idsOf)).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)]);
      // Backwards from the last page to the first, each page as it was going forwards.
      let back = pages[2]!;
      for (const want of [ids.slice(2, 4), ids.slice(0, 2)]) {
        const prev = await list(back.body.prev_page);
        expect({ order, status: prev.status, ids: idsOf(prev) }).toEqual({ order, status: 200, ids: want });
        back = prev;
      }
      // At the first page again: no prev_page; its next_page goes forward as before.
      expect(back.body.prev_page).toBeNull();
      expect(idsOf(await list(back.body.next_page))).toEqual(ids.slice(2, 4));
    }
  });

  it('lists by status', async () => {
    const other = (await ws.post('/v1/agents', { name: 'other2', model: 'm' })).body.id;
    for (let i = 0; i < 3; i++) await ws.post('/v1/sessions', { agent: other, environment_id: envId });
    expect((await ws.get(`/v1/sessions?agent_id=${other}&statuses[]=running`)).body.data).toEqual([]);
    expect((await ws.get(`/v1/sessions?agent_id=${other}&statuses[]=idle`)).body.data).toHaveLength(3);
  });

  describe('bad input: documented status, nothing written', () => {
    const cases: Array<[string, () => Promise<{ status: number; body: any }>, number, RegExp]> = [
      [
        'an unknown agent',
        () => ws.post('/v1/sessions', { agent: 'agent_01JD2Y3QX9V5M8K7R6T4W2P0ZZ', environment_id: envId }),
        400,
        /not found/,
      ],
      [
        'an unknown environment',
        () => ws.post('/v1/sessions', { agent: agentId, environment_id: 'env_01JD2Y3QX9V5M8K7R6T4W2P0ZZ' }),
        400,
        /not found/,
      ],
      [
        'a missing agent version',
        () =>
          ws.post('/v1/sessions', {
            agent: { type: 'agent', id: agentId, version: 99 },
            environment_id: envId,
          }),
        400,
        /no version 99/,
      ],
      [
        'an image message',
        () =>
          ws.post(
            '/v1/sessions',
            {
              agent: agentId,
              environment_id: envId,
              initial_events: [
                {
                  type: 'user.message',
                  content: [{ type: 'image', source: { type: 'url', url: 'https://x' } }],
                },
              ],
            },
            { contract: false },
          ),
        400,
        /images are not supported/,
      ],
      [
        'a wrong session prefix',
        () => ws.get('/v1/sessions/agent_01JD2Y3QX9V5M8K7R6T4W2P0ZZ'),
        404,
        /not found/,
      ],
      ['an unknown status filter', () => ws.get('/v1/sessions?statuses[]=sleeping'), 400, /unknown status/],
      // Events: each refused whole, nothing appended, no Work, no outbox row (so no workflow signal).
      [
        'an unknown event type',
        () => sendRaw({ events: [{ type: 'user.shout', content: [] }] }),
        400,
        /type/,
      ],
      ['a message without content', () => sendRaw({ events: [{ type: 'user.message' }] }), 400, /content/],
      ['an empty events array', () => sendRaw({ events: [] }), 400, /events/],
      [
        'more than 100 events',
        () => sendRaw({ events: Array.from({ length: 101 }, () => ({ type: 'user.interrupt' })) }),
        400,
        /events/,
      ],
      [
        'a valid message batched with an invalid event',
        () =>
          sendRaw({
            events: [
              { type: 'user.message', content: [{ type: 'text', text: 'ok' }] },
              { type: 'user.message', content: [{ type: 'text' }] },
            ],
          }),
        400,
        /text/,
      ],
      [
        'a tool result from the Workspace key',
        () =>
          sendRaw({
            events: [
              { type: 'user.tool_result', tool_use_id: 'sevt_01JD2Y3QX9V5M8K7R6T4W2P0ZZ', content: [] },
            ],
          }),
        403,
        /Work token/,
      ],
      [
        'a confirmation for an unknown tool use',
        () =>
          sendRaw({
            events: [
              {
                type: 'user.tool_confirmation',
                tool_use_id: 'sevt_01JD2Y3QX9V5M8K7R6T4W2P0ZZ',
                result: 'allow',
              },
            ],
          }),
        400,
        /awaiting confirmation/,
      ],
      [
        'a custom tool result for an unknown call',
        () =>
          sendRaw({
            events: [
              {
                type: 'user.custom_tool_result',
                custom_tool_use_id: 'sevt_01JD2Y3QX9V5M8K7R6T4W2P0ZZ',
                content: [],
              },
            ],
          }),
        400,
        /agent.custom_tool_use/,
      ],
      [
        'a body over the 32 MB limit',
        () =>
          sendRaw({
            events: [
              { type: 'user.message', content: [{ type: 'text', text: 'x'.repeat(33 * 1024 * 1024) }] },
            ],
          }),
        413,
        /too large|limit/i,
      ],
      [
        'a well-placed system.message (the model gate)',
        () =>
          sendRaw({
            events: [
              { type: 'user.message', content: [{ type: 'text', text: 'hi' }] },
              { type: 'system.message', content: [{ type: 'text', text: 'be terse' }] },
            ],
          }),
        400,
        /model_does_not_support_mid_conversation_system/,
      ],
      [
        'a misplaced system.message',
        () => sendRaw({ events: [{ type: 'system.message', content: [{ type: 'text', text: 'x' }] }] }),
        400,
        /must immediately follow/,
      ],
      [
        'events to an archived session',
        () => sendRaw({ events: [message('late')] }, archivedId),
        409,
        /archived/,
      ],
      [
        'events to a deleted session',
        () => sendRaw({ events: [message('late')] }, deletedId),
        404,
        /not found/,
      ],
    ];
    let openId: string;
    let archivedId: string;
    let deletedId: string;
    const sendRaw = (body: unknown, id?: string) =>
      ws.post(`/v1/sessions/${id ?? openId}/events`, body, { contract: false });
    beforeAll(async () => {
      const make = async () =>
        (await ws.post('/v1/sessions', { agent: agentId, environment_id: envId })).body.id;
      openId = await make();
      archivedId = await make();
      deletedId = await make();
      await ws.post(`/v1/sessions/${archivedId}/archive`);
      await ws.delete(`/v1/sessions/${deletedId}`);
    });
    it.each(cases)('%s', async (_label, send, status, message) => {
      const before = await api.sql<{ n: string }>(
        'SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM session_events) + (SELECT count(*) FROM outbox) + (SELECT count(*) FROM work_items) AS n',
      );
      const res = await send();
      expect(res.status).toBe(status);
      expect(res.body.error.message).toMatch(message);
      const after = await api.sql<{ n: string }>(
        'SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM session_events) + (SELECT count(*) FROM outbox) + (SELECT count(*) FROM work_items) AS n',
      );
      expect(after[0]!.n).toBe(before[0]!.n);
    });
  });
});

describe('operator model prices (MANGO_MODEL_PRICES)', () => {
  it('a priced local model can be budgeted; an unpriced one cannot; a bad table stops the API at boot', async () => {
    const api = await startApi('prices', {
      MANGO_MODEL_PRICES: '{"my-local-model": {"input": 0.5, "output": 1}}',
    });
    try {
      const ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
      const env = (await ws.post('/v1/environments', { name: 'e' })).body.id;
      const budget = { type: 'limit', max_list_cost: { amount: '100', currency: 'USD' } };
      const local = (await ws.post('/v1/agents', { name: 'l', model: 'my-local-model' })).body.id;
      const other = (await ws.post('/v1/agents', { name: 'o', model: 'other-local-model' })).body.id;
      expect((await ws.post('/v1/sessions', { agent: local, environment_id: env, budget })).status).toBe(201);
      const refused = await ws.post('/v1/sessions', { agent: other, environment_id: env, budget });
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toMatch(/priced model/);
    } finally {
      await api.close();
    }
    await expect(
      startApi('badprices', { MANGO_MODEL_PRICES: '{"m": {"input": -1, "output": 1}}' }),
    ).rejects.toThrow(/MANGO_MODEL_PRICES\[\\*"m\\*"\] must be/);
  });
});
