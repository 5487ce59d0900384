import { SessionStack, STACK_TIMEOUT_MS, startOrchestrator, startSessionStack } from './support';
import { HttpClient, ApiUnderTest, ScriptedModelServer } from '@mango/testing';

/**
 * Model profiles over real processes (apps/api, apps/orchestrator, Temporal, PostgreSQL) with the scripted
 * Messages API recording every request: max_tokens, thinking and effort from the profile, thinking kept
 * and sent back, agent.thinking events and previews, a max_tokens stop continued, compaction and
 * admission relative to a window set by MANGO_MODEL_PROFILES, and the default profile for unknown models.
 */

const say = (text: string) => ({ type: 'user.message', content: [{ type: 'text', text }] });
const CONTINUE_TEXT =
  'Your previous reply was cut off at the output limit. Continue exactly where it stopped.';

type Ev = { type: string; id: string; [k: string]: any };
type Frame = { event: string; id?: string; data: any };

/** A small window from configuration: compaction at 80% of 6,000 tokens, output at most 1,500. */
const PROFILES = JSON.stringify({
  'small-window-model': { context_window: 6000, max_output_tokens: 1500 },
});

describe('model profiles (real API, orchestrator, Temporal, PostgreSQL; scripted model)', () => {
  let api: ApiUnderTest;
  let stack: SessionStack;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  let apiKey: string;
  let envId: string;

  beforeAll(async () => {
    stack = await startSessionStack('profiles', {
      orchestratorEnv: { MANGO_MODEL_PROFILES: PROFILES },
      environment: true,
    });
    ({ api, model, ws, key: apiKey } = stack);
    envId = stack.environmentId!;
  }, STACK_TIMEOUT_MS);

  afterAll(() => stack?.close());

  const agent = async (m: unknown) =>
    (await ws.post('/v1/agents', { name: 'a', model: m, system: 'Be brief.' })).body.id as string;
  const events = async (sessionId: string): Promise<Ev[]> =>
    (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data;
  async function idles(sessionId: string, n: number): Promise<Ev[]> {
    for (let i = 0; i < 900; i++) {
      const list = await events(sessionId);
      if (list.filter((e) => e.type === 'session.status_idle').length >= n) return list;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`session ${sessionId} did not reach ${n} idles`);
  }
  async function readUntilIdle(res: Response): Promise<Frame[]> {
    const frames: Frame[] = [];
    const reader = res.body!.getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return frames;
      buffer += Buffer.from(value).toString('utf8');
      let at: number;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const lines = buffer.slice(0, at).split('\n');
        buffer = buffer.slice(at + 2);
        const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
        const frame = { event: field('event')!, id: field('id'), data: JSON.parse(field('data') ?? '{}') };
        if (frame.event === 'ping') continue;
        frames.push(frame);
        if (frame.event === 'session.status_idle') {
          await reader.cancel();
          return frames;
        }
      }
    }
  }

  it('a thinking-capable profile: max_tokens, thinking and effort sent; agent.thinking events and previews; thinking sent back exactly', async () => {
    const id = await agent({ id: 'claude-sonnet-4-6', effort: 'high', speed: 'fast' });
    const thinking = {
      type: 'thinking',
      thinking: 'The user greets me.',
      signature: 'sig-EqQBCgIYAhIM1gbcDa9GJwZA',
    };
    const redacted = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' };
    model.script(
      { content: [thinking, redacted, { type: 'text', text: 'Hello!' }] },
      { content: [{ type: 'text', text: 'Still here.' }] },
    );
    const s = (await ws.post('/v1/sessions', { agent: id, environment_id: envId })).body;
    const open = (query: string) =>
      fetch(`${api.url}/v1/sessions/${s.id}/events/stream${query}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
    const [withThinking, messageOnly] = await Promise.all([
      open('?event_deltas[]=agent.thinking'),
      open('?event_deltas[]=agent.message'),
    ]);
    const reading = [readUntilIdle(withThinking), readUntilIdle(messageOnly)];
    const first = model.requests.length;
    await ws.post(`/v1/sessions/${s.id}/events`, { events: [say('hi')] });
    const [frames, messageFrames] = await Promise.all(reading);

    const sent = model.requests[first]!.body;
    expect(sent).toMatchObject({
      model: 'claude-sonnet-4-6',
      max_tokens: 64_000,
      thinking: { type: 'enabled', budget_tokens: 8_000 },
      output_config: { effort: 'high' },
    });
    // Speed is sent only where the profile allows fast mode (no built-in profile does).
    expect(sent).not.toHaveProperty('speed');

    const list = await events(s.id);
    const turn = list.slice(list.findIndex((e) => e.type === 'session.status_running'));
    expect(turn.map((e) => e.type)).toEqual([
      'session.status_running',
      'span.model_request_start',
      'agent.thinking',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    // agent.thinking is a progress signal only: the blocks stay in internal fields.
    const thought = turn[2]!;
    expect(Object.keys(thought).sort()).toEqual(['id', 'processed_at', 'type']);
    // The preview: one event_start naming the agent.thinking event, on the connection that asked for it.
    expect(frames.filter((f) => f.event === 'event_start')).toEqual([
      {
        event: 'event_start',
        id: undefined,
        data: { type: 'event_start', event: { type: 'agent.thinking', id: thought.id } },
      },
    ]);
    const order = frames.map((f) => f.event);
    expect(order.indexOf('event_start')).toBeLessThan(order.indexOf('agent.thinking'));
    expect(messageFrames.filter((f) => f.event === 'event_start').map((f) => f.data.event.type)).toEqual([
      'agent.message',
    ]);

    // The next request carries the thinking blocks exactly as returned, ahead of the reply's text.
    await ws.post(`/v1/sessions/${s.id}/events`, { events: [say('again')] });
    await idles(s.id, 2);
    expect(model.requests[first + 1]!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant', content: [thinking, redacted, { type: 'text', text: 'Hello!' }] },
      { role: 'user', content: [{ type: 'text', text: 'again' }] },
    ]);
  }, 120_000);

  it('a reply cut at max_tokens is recorded and the turn continues with another request', async () => {
    const id = await agent('claude-haiku-4-5');
    model.script(
      {
        content: [
          { type: 'text', text: 'The first half of a long answer' },
          { type: 'tool_use', id: 'toolu_cut', name: 'bash', input: {} },
        ],
        stop_reason: 'max_tokens',
      },
      { content: [{ type: 'text', text: ' and its second half.' }] },
    );
    const first = model.requests.length;
    const s = (
      await ws.post('/v1/sessions', { agent: id, environment_id: envId, initial_events: [say('long')] })
    ).body;
    const list = await idles(s.id, 1);
    expect(list.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    // The tool call the cut reply was still writing is dropped; the text so far is kept.
    expect(list.filter((e) => e.type === 'agent.message').map((e) => e.content[0].text)).toEqual([
      'The first half of a long answer',
      ' and its second half.',
    ]);
    expect(list.at(-1)!.stop_reason).toEqual({ type: 'end_turn' });
    expect(model.requests).toHaveLength(first + 2);
    expect(model.requests[first + 1]!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'long' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'The first half of a long answer' }] },
      { role: 'user', content: [{ type: 'text', text: CONTINUE_TEXT }] },
    ]);
  }, 120_000);

  it('continuations are bounded: after 8 a turn, the next cut reply ends the turn', async () => {
    const id = await agent('claude-haiku-4-5');
    const cut = (i: number) => ({
      content: [{ type: 'text', text: `part ${i}` }],
      stop_reason: 'max_tokens',
    });
    // Nine cut replies and nothing more: a tenth request would get the script-exhausted 500.
    model.script(...Array.from({ length: 9 }, (_, i) => cut(i)));
    const first = model.requests.length;
    const s = (
      await ws.post('/v1/sessions', { agent: id, environment_id: envId, initial_events: [say('endless')] })
    ).body;
    const list = await idles(s.id, 1);
    expect(list.filter((e) => e.type === 'agent.message')).toHaveLength(9);
    expect(list.at(-1)!.stop_reason).toEqual({ type: 'end_turn' });
    expect(model.requests).toHaveLength(first + 9);
  }, 120_000);

  it('a model no profile knows uses the conservative default: max_tokens 4096, no thinking, effort or speed', async () => {
    const id = await agent({ id: 'my-local-model', effort: 'high', speed: 'fast' });
    model.script({ content: [{ type: 'text', text: 'Local answer.' }] });
    const first = model.requests.length;
    const s = (
      await ws.post('/v1/sessions', { agent: id, environment_id: envId, initial_events: [say('hello')] })
    ).body;
    await idles(s.id, 1);
    const sent = model.requests[first]!.body;
    expect(sent.max_tokens).toBe(4096);
    for (const key of ['thinking', 'output_config', 'speed']) expect(sent).not.toHaveProperty(key);
  }, 120_000);

  it('a small window from MANGO_MODEL_PROFILES compacts before the window and refuses what cannot fit', async () => {
    const id = await agent('small-window-model');
    model.script(
      // 4,800 tokens measured: the next prompt reaches 80% of the 6,000-token window.
      {
        content: [{ type: 'text', text: 'Answer one.' }],
        usage: { input_tokens: 4_700, output_tokens: 100 },
      },
      {
        content: [{ type: 'text', text: 'Summary of turn one.' }],
        usage: { input_tokens: 300, output_tokens: 20 },
      },
      { content: [{ type: 'text', text: 'Answer two.' }], usage: { input_tokens: 60, output_tokens: 5 } },
    );
    const first = model.requests.length;
    const s = (
      await ws.post('/v1/sessions', { agent: id, environment_id: envId, initial_events: [say('one')] })
    ).body;
    await idles(s.id, 1);
    // max_tokens: the profile's output limit (1,500), the window leaves room for it.
    expect(model.requests[first]!.body.max_tokens).toBe(1500);
    await ws.post(`/v1/sessions/${s.id}/events`, { events: [say('two')] });
    const list = await idles(s.id, 2);
    const second = list.slice(list.findIndex((e) => e.type === 'session.status_idle') + 1);
    expect(second.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'agent.thread_context_compacted',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    expect(model.requests[first + 1]!.body.system).toMatch(/compact conversations/);
    expect(model.requests[first + 1]!.body.max_tokens).toBe(1500);
    expect(model.requests[first + 1]!.body).not.toHaveProperty('thinking');
    expect(model.requests[first + 2]!.body.messages[0].content[0].text).toContain('Summary of turn one.');

    // A first message far larger than the window: nothing to compact, so the request is refused and
    // never sent; the turn ends with a session.error that says why.
    const sentBefore = model.requests.length;
    const big = (
      await ws.post('/v1/sessions', {
        agent: id,
        environment_id: envId,
        initial_events: [say('x'.repeat(30_000))],
      })
    ).body;
    const refused = await idles(big.id, 1);
    expect(model.requests).toHaveLength(sentBefore);
    const error = refused.find((e) => e.type === 'session.error')!;
    expect(error.error).toEqual({
      type: 'model_request_failed_error',
      message: expect.stringMatching(/does not fit the model's 6000-token context window/),
      retry_status: { type: 'exhausted' },
    });
    expect(refused.at(-1)!.stop_reason).toEqual({ type: 'retries_exhausted' });
  }, 120_000);

  it('a bad MANGO_MODEL_PROFILES stops the orchestrator at start with a clear message', async () => {
    await expect(
      startOrchestrator(api.db.url, {
        taskQueue: `badprofiles-${Date.now()}`,
        modelUrl: model.url,
        env: { MANGO_MODEL_PROFILES: '{"m": {"context_window": 10}}' },
      }),
    ).rejects.toThrow(/MANGO_MODEL_PROFILES\[\\?"m\\?"\]\.context_window must be an integer/);
  }, 120_000);
});
