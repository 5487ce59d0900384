import { newId } from '@mango/platform-ids';
import { httpClient, HttpClient } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * Thread routes served from `session_threads` (ADR 0017) over a real API process and PostgreSQL. The
 * multi-agent orchestration that creates delegate Threads and appends their events is not built yet, so
 * this test writes the delegate's row and events the way it will (SQL standing in for the orchestrator),
 * and then meets the Threads the way a client does: list, get, history, archive.
 */
describe('Session Threads (real apps/api process, real PostgreSQL)', () => {
  let api: ApiUnderTest;
  let ws: HttpClient;
  let key: string;
  let envId: string;
  let memberId: string;
  let coordinatorId: string;

  beforeAll(async () => {
    api = await startApi('threads');
    key = (await api.issueKey('wrkspc_default')).api_key;
    ws = httpClient(api.url, key);
    envId = (await ws.post('/v1/environments', { name: 'pool' })).body.id;
    memberId = (await ws.post('/v1/agents', { name: 'researcher', model: 'claude-sonnet-4-6' })).body.id;
    coordinatorId = (
      await ws.post('/v1/agents', {
        name: 'lead',
        model: 'claude-sonnet-4-6',
        multiagent: { type: 'coordinator', agents: [memberId] },
      })
    ).body.id;
  });
  afterAll(() => api.close());

  async function coordinatorSession(): Promise<{ id: string; primary: string }> {
    const s = (await ws.post('/v1/sessions', { agent: coordinatorId, environment_id: envId })).body;
    return { id: s.id, primary: 'sthr_' + s.id.slice('sesn_'.length) };
  }

  /** A delegate Thread as the orchestration's first `send_to_agent` creates it (roster entry 0). */
  async function delegate(sessionId: string, primary: string): Promise<string> {
    const id = newId('sessionThread');
    await api.sql(
      `INSERT INTO session_threads (id, session_id, parent_thread_id, agent_ref, status, created_at, updated_at)
       VALUES ($1, $2, $3, '0', 'idle', now(), now())`,
      [id, sessionId, primary],
    );
    return id;
  }

  /** Appends one event to the Session's log as the orchestration will (next gapless sequence). */
  async function append(sessionId: string, type: string, threadId: string | null, body = {}): Promise<void> {
    await api.sql(
      `WITH s AS (UPDATE sessions SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq)
       INSERT INTO session_events (id, session_id, seq, type, body, session_thread_id, processed_at, created_at)
       SELECT 'sevt_' || upper(substr(md5(random()::text), 1, 26)), $1, last_seq, $2, $3::jsonb, $4, now(), now()
         FROM s`,
      [sessionId, type, JSON.stringify(body), threadId],
    );
  }

  it('lists the primary first, then delegates with their roster Agent; pages and gets each', async () => {
    const { id, primary } = await coordinatorSession();
    const child = await delegate(id, primary);
    const list = await ws.get(`/v1/sessions/${id}/threads`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((t: { id: string }) => t.id)).toEqual([primary, child]);
    expect(list.body.data[0]).toMatchObject({
      parent_thread_id: null,
      status: 'idle',
      agent: { id: coordinatorId, name: 'lead' },
    });
    expect(list.body.data[0].agent).not.toHaveProperty('multiagent');
    expect(list.body.data[1]).toMatchObject({
      id: child,
      type: 'session_thread',
      session_id: id,
      parent_thread_id: primary,
      status: 'idle',
      agent: { id: memberId, name: 'researcher', version: 1 },
      usage: null,
      archived_at: null,
    });

    const first = await ws.get(`/v1/sessions/${id}/threads?limit=1`);
    expect(first.body.data.map((t: { id: string }) => t.id)).toEqual([primary]);
    expect(first.body.next_page).toEqual(expect.any(String));
    const second = await ws.get(`/v1/sessions/${id}/threads?limit=1&page=${first.body.next_page}`);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: child })], next_page: null });
    expect((await ws.get(`/v1/sessions/${id}/threads?page=nonsense`)).status).toBe(400);
    expect((await ws.get(`/v1/sessions/${id}/threads?limit=0`)).status).toBe(400);

    expect((await ws.get(`/v1/sessions/${id}/threads/${child}`)).body).toEqual(list.body.data[1]);
    // A Thread of another Session is not found here.
    const other = await coordinatorSession();
    expect((await ws.get(`/v1/sessions/${other.id}/threads/${child}`)).status).toBe(404);
    expect((await ws.get(`/v1/sessions/${id}/threads/not-a-thread`)).status).toBe(404);
  });

  it("each Thread's history is the one log seen through the visibility rule", async () => {
    const { id, primary } = await coordinatorSession();
    const child = await delegate(id, primary);
    await append(id, 'user.message', null, { content: [{ type: 'text', text: 'go' }] });
    await append(id, 'agent.message', child, { content: [{ type: 'text', text: 'child thinking' }] });
    await append(id, 'agent.tool_use', child, {
      name: 'bash',
      input: { command: 'ls' },
      evaluated_permission: 'allow',
    });
    // Calls that wait on a client are cross-posted to the primary (hosted §3.4.4).
    await append(id, 'agent.tool_use', child, {
      name: 'bash',
      input: { command: 'rm -rf x' },
      evaluated_permission: 'ask',
    });
    await append(id, 'agent.custom_tool_use', child, { name: 'ask_user', input: {} });
    const types = async (thread: string) =>
      (await ws.get(`/v1/sessions/${id}/threads/${thread}/events`)).body.data.map(
        (e: { type: string; input?: { command: string } }) => e.input?.command ?? e.type,
      );
    expect(await types(primary)).toEqual(['user.message', 'rm -rf x', 'agent.custom_tool_use']);
    expect(await types(child)).toEqual(['agent.message', 'ls', 'rm -rf x', 'agent.custom_tool_use']);
    // The Session's own event list is its primary Thread's view for a Workspace key (hosted §5.8).
    const own = (await ws.get(`/v1/sessions/${id}/events`)).body.data;
    expect(own.map((e: { id: string }) => e.id)).toEqual(
      (await ws.get(`/v1/sessions/${id}/threads/${primary}/events`)).body.data.map(
        (e: { id: string }) => e.id,
      ),
    );
    expect(own).toHaveLength(3);
    // Paging a Thread's history keeps to it.
    const page = await ws.get(`/v1/sessions/${id}/threads/${child}/events?limit=2`);
    expect(page.body.data).toHaveLength(2);
    const rest = await ws.get(
      `/v1/sessions/${id}/threads/${child}/events?limit=2&page=${page.body.next_page}`,
    );
    expect(rest.body.data.map((e: { type: string }) => e.type)).toEqual([
      'agent.tool_use',
      'agent.custom_tool_use',
    ]);
    // The delegate's stream starts with its own first event (sequence 2), never the primary's message.
    const res = await fetch(`${api.url}/v1/sessions/${id}/threads/${child}/stream`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: agent.custom_tool_use'))
      text += Buffer.from((await reader.read()).value!).toString('utf8');
    await reader.cancel();
    expect([...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))).toEqual([2, 3, 4, 5]);
    // A cursor of one Thread's history does not page another's.
    expect(
      (await ws.get(`/v1/sessions/${id}/threads/${primary}/events?page=${page.body.next_page}`)).status,
    ).toBe(400);
  });

  it('archive: primary 400, running 409, idle records the durable intent once', async () => {
    const { id, primary } = await coordinatorSession();
    const child = await delegate(id, primary);
    const outbox = () =>
      api.sql<{ kind: string; session_thread_id: string | null }>(
        'SELECT kind, session_thread_id FROM outbox WHERE session_id = $1 ORDER BY id',
        [id],
      );

    const refusedPrimary = await ws.post(`/v1/sessions/${id}/threads/${primary}/archive`);
    expect(refusedPrimary.status).toBe(400);
    expect(refusedPrimary.body.error.message).toMatch(/archive the session instead/);

    await api.sql(`UPDATE session_threads SET status = 'running' WHERE id = $1`, [child]);
    const running = await ws.post(`/v1/sessions/${id}/threads/${child}/archive`);
    expect(running.status).toBe(409);
    expect(running.body.error.message).toMatch(/interrupt it before archiving/);
    expect(await outbox()).toEqual([]);

    await api.sql(`UPDATE session_threads SET status = 'idle' WHERE id = $1`, [child]);
    const archived = await ws.post(`/v1/sessions/${id}/threads/${child}/archive`);
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({ id: child, status: 'idle', archived_at: null });
    const [row] = await api.sql<{ requested: boolean }>(
      'SELECT archive_requested_at IS NOT NULL AS requested FROM session_threads WHERE id = $1',
      [child],
    );
    expect(row).toEqual({ requested: true });
    expect(await outbox()).toEqual([{ kind: 'session.thread_archive_requested', session_thread_id: child }]);

    // Asked again: the same Thread, nothing more written.
    const again = await ws.post(`/v1/sessions/${id}/threads/${child}/archive`);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(child);
    expect(await outbox()).toHaveLength(1);

    // A terminated Thread is not idle.
    const done = await delegate(id, primary);
    await api.sql(`UPDATE session_threads SET status = 'terminated' WHERE id = $1`, [done]);
    expect((await ws.post(`/v1/sessions/${id}/threads/${done}/archive`)).status).toBe(409);
    expect((await ws.post(`/v1/sessions/${id}/threads/sthr_01JD2Y3QX9V5M8K7R6T4W2P0ZZ/archive`)).status).toBe(
      404,
    );
  });

  it("a new Session's primary Thread follows its status", async () => {
    const s = (
      await ws.post('/v1/sessions', {
        agent: memberId,
        environment_id: envId,
        initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }],
      })
    ).body;
    const [thread] = (await ws.get(`/v1/sessions/${s.id}/threads`)).body.data;
    expect(thread).toMatchObject({ status: 'running', usage: s.usage, created_at: s.created_at });
  });
});
