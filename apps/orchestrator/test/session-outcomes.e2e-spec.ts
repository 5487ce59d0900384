import { GRADER_SYSTEM } from '@mango/domain-sessions';
import { freshBucketEnv, HttpClient, ScriptedModelServer } from '@mango/testing';
import { recordHistory, SessionStack, STACK_TIMEOUT_MS, startSessionStack } from './support';

type Ev = { id: string; type: string; [k: string]: any };

/**
 * Outcomes (docs/api-guide.md "Outcomes — choices") over real processes: apps/api (+ apps/files for File
 * rubrics on S3), apps/orchestrator on Temporal and PostgreSQL, and the scripted Messages API as both the
 * agent's model and the grader.
 */
describe('outcome evaluation loop (real API, orchestrator, Temporal, S3, scripted model)', () => {
  let filesUrl: string;
  let stack: SessionStack;
  let model: ScriptedModelServer;
  let ws: HttpClient;
  let key: string;
  let envId: string;
  let agent: string;
  const s3 = freshBucketEnv('outcomes');

  beforeAll(async () => {
    stack = await startSessionStack('outcomes', { apiEnv: s3, files: s3, environment: true });
    ({ model, ws, key } = stack);
    filesUrl = stack.files!.url;
    envId = stack.environmentId!;
    agent = (await ws.post('/v1/agents', { name: 'writer', model: 'claude-sonnet-4-6' })).body.id;
  }, STACK_TIMEOUT_MS);

  afterAll(() => stack?.close());

  const events = async (sessionId: string): Promise<Ev[]> =>
    (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data;
  async function until(
    sessionId: string,
    predicate: (e: Ev[]) => boolean,
    timeoutMs = 90_000,
  ): Promise<Ev[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const list = await events(sessionId);
      if (predicate(list) || Date.now() > deadline) return list;
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  const idle = (list: Ev[]) => list.some((e) => e.type === 'session.status_idle');
  const outcome = (rubric: unknown, extra: Record<string, unknown> = {}) => ({
    type: 'user.define_outcome',
    description: 'Write a haiku about the sea',
    rubric,
    ...extra,
  });
  const textRubric = { type: 'text', content: 'Three lines, 5-7-5 syllables, has a title line.' };
  const reply = (text: string, usage = { input_tokens: 10, output_tokens: 5 }) => ({
    content: [{ type: 'text', text }],
    usage,
  });
  const verdict = (result: string, explanation: string) =>
    reply(JSON.stringify({ result, explanation }), { input_tokens: 100, output_tokens: 20 });
  const isGrader = (body: any) => body.system === GRADER_SYSTEM;
  const since = (n: number) => model.requests.slice(n).map((r) => r.body);

  async function start(rubric: unknown, extra: Record<string, unknown> = {}) {
    const res = await ws.post('/v1/sessions', {
      agent,
      environment_id: envId,
      initial_events: [outcome(rubric, extra)],
    });
    expect(res.status).toBe(201);
    return res.body as { id: string; status: string; outcome_evaluations: any[] };
  }

  it('satisfied after one revision: grade, revise with the feedback, grade again, then idle', async () => {
    const before = model.requests.length;
    model.script(
      reply('The sea\nwaves roll\nsalt'),
      verdict('needs_revision', 'Add a title line and fix the syllable counts.'),
      reply('Sea Song\nThe grey sea rolls in\nwaves fold over the cold stones\nsalt wind finds the shore'),
      verdict('satisfied', 'Title present and 5-7-5.'),
    );
    const s = await start(textRubric);
    expect(s.status).toBe('running');
    expect(s.outcome_evaluations).toEqual([
      expect.objectContaining({
        type: 'outcome_evaluation',
        result: 'pending',
        iteration: 0,
        explanation: null,
      }),
    ]);
    const list = await until(s.id, idle);
    expect(list.map((e) => e.type)).toEqual([
      'user.define_outcome',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'span.outcome_evaluation_start',
      'span.outcome_evaluation_ongoing',
      'span.outcome_evaluation_end',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'span.outcome_evaluation_start',
      'span.outcome_evaluation_ongoing',
      'span.outcome_evaluation_end',
      'session.status_idle',
    ]);
    const defined = list[0]!;
    expect(defined).toMatchObject({
      description: 'Write a haiku about the sea',
      rubric: textRubric,
      max_iterations: 3,
      outcome_id: expect.stringMatching(/^outc_[0-9A-HJKMNP-TV-Z]{26}$/),
    });
    expect(defined.processed_at).not.toBeNull();
    const ends = list.filter((e) => e.type === 'span.outcome_evaluation_end');
    const starts = list.filter((e) => e.type === 'span.outcome_evaluation_start');
    expect(ends.map((e) => [e.iteration, e.result, e.explanation, e.outcome_evaluation_start_id])).toEqual([
      [0, 'needs_revision', 'Add a title line and fix the syllable counts.', starts[0]!.id],
      [1, 'satisfied', 'Title present and 5-7-5.', starts[1]!.id],
    ]);
    expect(ends[0]!.usage).toEqual({
      input_tokens: 100,
      output_tokens: 20,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    expect(list.at(-1)!.stop_reason).toEqual({ type: 'end_turn' });

    // The requests: agent, grader, agent (with the feedback), grader.
    const bodies = since(before);
    expect(bodies.map(isGrader)).toEqual([false, true, false, true]);
    expect(JSON.stringify(bodies[0]!.messages)).toContain('Write a haiku about the sea');
    // The grader sees the rubric and the transcript only: no tools, one user message.
    const grader = bodies[1]!;
    expect(grader.tools).toBeUndefined();
    expect(grader.messages).toHaveLength(1);
    const graded = grader.messages[0].content[0].text as string;
    expect(graded).toContain(textRubric.content);
    expect(graded).toContain('[assistant] The sea\nwaves roll\nsalt');
    // The revision turn reads the grader's feedback as its input.
    const revision = bodies[2]!.messages;
    expect(revision.at(-1)).toEqual({
      role: 'user',
      content: [
        {
          type: 'text',
          text: expect.stringContaining('Add a title line and fix the syllable counts.'),
        },
      ],
    });
    expect(JSON.stringify(bodies[3]!.messages)).toContain('Sea Song');

    const session = (await ws.get(`/v1/sessions/${s.id}`)).body;
    expect(session.status).toBe('idle');
    expect(session.outcome_evaluations).toEqual([
      {
        type: 'outcome_evaluation',
        outcome_id: defined.outcome_id,
        description: 'Write a haiku about the sea',
        iteration: 1,
        result: 'satisfied',
        explanation: 'Title present and 5-7-5.',
        completed_at: ends[1]!.processed_at,
      },
    ]);
    // The grader's usage counts: 2 agent replies (10/5 each) + 2 gradings (100/20 each).
    expect(session.usage).toMatchObject({ input_tokens: 220, output_tokens: 50 });
    await recordHistory(s.id, 'session-outcome-satisfied');
  }, 180_000);

  it('failed: the grader says the rubric cannot be met; a malformed verdict is failed too, never a pass', async () => {
    model.script(reply('I cannot write poems.'), verdict('failed', 'No haiku was written.'));
    const s = await start(textRubric);
    const list = await until(s.id, idle);
    expect(list.filter((e) => e.type.startsWith('span.outcome')).map((e) => [e.type, e.result])).toEqual([
      ['span.outcome_evaluation_start', undefined],
      ['span.outcome_evaluation_ongoing', undefined],
      ['span.outcome_evaluation_end', 'failed'],
    ]);
    expect((await ws.get(`/v1/sessions/${s.id}`)).body.outcome_evaluations[0]).toMatchObject({
      result: 'failed',
      iteration: 0,
      explanation: 'No haiku was written.',
    });

    model.script(reply('A haiku.'), reply('Looks great to me!'));
    const m = await start(textRubric);
    const ended = (await until(m.id, idle)).find((e) => e.type === 'span.outcome_evaluation_end')!;
    expect(ended.result).toBe('failed');
    expect(ended.explanation).toMatch(/not a valid verdict \(not JSON\)/);
  }, 180_000);

  it('max iterations: needs_revision at the last iteration is max_iterations_reached, one final revision, then idle', async () => {
    const before = model.requests.length;
    model.script(
      reply('draft 1'),
      verdict('needs_revision', 'too short'),
      reply('draft 2'),
      verdict('needs_revision', 'still too short'),
      reply('draft 3 (final)'),
    );
    const s = await start(textRubric, { max_iterations: 2 });
    const list = await until(s.id, idle);
    expect(list.map((e) => e.type)).toEqual([
      'user.define_outcome',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'span.outcome_evaluation_start',
      'span.outcome_evaluation_ongoing',
      'span.outcome_evaluation_end',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'span.outcome_evaluation_start',
      'span.outcome_evaluation_ongoing',
      'span.outcome_evaluation_end',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    expect(
      list.filter((e) => e.type === 'span.outcome_evaluation_end').map((e) => [e.iteration, e.result]),
    ).toEqual([
      [0, 'needs_revision'],
      [1, 'max_iterations_reached'],
    ]);
    const bodies = since(before);
    expect(bodies.map(isGrader)).toEqual([false, true, false, true, false]);
    expect(bodies[4]!.messages.at(-1).content[0].text).toMatch(/last evaluation/);
    expect((await ws.get(`/v1/sessions/${s.id}`)).body.outcome_evaluations[0]).toMatchObject({
      result: 'max_iterations_reached',
      iteration: 1,
      explanation: 'still too short',
    });
    await recordHistory(s.id, 'session-outcome-max-iterations');
  }, 180_000);

  it('interrupted: an interrupt while the grader runs ends the outcome interrupted and the turn idle', async () => {
    model.script(reply('draft'), { ...verdict('satisfied', 'late'), delayMs: 60_000 });
    const s = await start(textRubric);
    const started = await until(s.id, (l) => l.some((e) => e.type === 'span.outcome_evaluation_start'));
    const start0 = started.find((e) => e.type === 'span.outcome_evaluation_start')!;
    await ws.post(`/v1/sessions/${s.id}/events`, { events: [{ type: 'user.interrupt' }] });
    const list = await until(s.id, idle);
    expect(list.slice(-3).map((e) => [e.type, e.result ?? e.stop_reason])).toEqual([
      ['user.interrupt', undefined],
      ['span.outcome_evaluation_end', 'interrupted'],
      ['session.status_idle', { type: 'end_turn' }],
    ]);
    expect(list.at(-2)!.outcome_evaluation_start_id).toBe(start0.id);
    const session = (await ws.get(`/v1/sessions/${s.id}`)).body;
    expect(session.outcome_evaluations[0]).toMatchObject({ result: 'interrupted', iteration: 0 });
    // A new outcome is accepted once the interrupted one ended, and starts work on receipt.
    model.script(reply('again'), verdict('satisfied', 'fine'));
    const next = await ws.post(`/v1/sessions/${s.id}/events`, { events: [outcome(textRubric)] });
    expect(next.status).toBe(200);
    const after = await until(s.id, (l) => l.filter((e) => e.type === 'session.status_idle').length >= 2);
    expect(after.filter((e) => e.type === 'span.outcome_evaluation_end').map((e) => e.result)).toEqual([
      'interrupted',
      'satisfied',
    ]);
    expect((await ws.get(`/v1/sessions/${s.id}`)).body.outcome_evaluations.map((o: any) => o.result)).toEqual(
      ['interrupted', 'satisfied'],
    );
    await recordHistory(s.id, 'session-outcome-interrupted');
  }, 180_000);

  it('interrupted before any grading: the end span has an empty start id', async () => {
    model.script({ ...reply('slow draft'), delayMs: 60_000 });
    const s = await start(textRubric);
    await until(s.id, (l) => l.some((e) => e.type === 'span.model_request_start'));
    await ws.post(`/v1/sessions/${s.id}/events`, { events: [{ type: 'user.interrupt' }] });
    const list = await until(s.id, idle);
    const end = list.find((e) => e.type === 'span.outcome_evaluation_end')!;
    expect(end).toMatchObject({ result: 'interrupted', outcome_evaluation_start_id: '', iteration: 0 });
    expect(list.some((e) => e.type === 'span.outcome_evaluation_start')).toBe(false);
  }, 180_000);

  it('the budget gate is checked before the grader request: a spent budget ends the turn budget_reached, ungraded', async () => {
    const before = model.requests.length;
    model.script(reply('an expensive draft', { input_tokens: 2000, output_tokens: 400 }));
    const res = await ws.post('/v1/sessions', {
      agent,
      environment_id: envId,
      initial_events: [outcome(textRubric)],
      budget: { type: 'limit', max_list_cost: { amount: '1', currency: 'USD' } },
    });
    expect(res.status).toBe(201);
    const list = await until(res.body.id, idle);
    expect(list.at(-1)!.stop_reason).toEqual({ type: 'budget_reached' });
    expect(list.some((e) => e.type === 'span.outcome_evaluation_start')).toBe(false);
    const session = (await ws.get(`/v1/sessions/${res.body.id}`)).body;
    expect(session.usage.list_cost).toEqual({ amount: '2', currency: 'USD' });
    expect(session.outcome_evaluations[0]).toMatchObject({ result: 'pending', iteration: 0 });
    expect(since(before).filter(isGrader)).toHaveLength(0);
  }, 180_000);

  it('a File rubric is read as text at admission and is what the grader sees', async () => {
    const form = new FormData();
    form.append('file', new Blob(['Must mention the moon.'], { type: 'text/markdown' }), 'rubric.md');
    const up = await fetch(`${filesUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(up.status).toBe(201);
    const fileId = ((await up.json()) as { id: string }).id;
    const before = model.requests.length;
    model.script(reply('The moon on the sea'), verdict('satisfied', 'Mentions the moon.'));
    const s = await start({ type: 'file', file_id: fileId });
    const list = await until(s.id, idle);
    expect(list[0]!.rubric).toEqual({ type: 'text', content: 'Must mention the moon.' });
    const grader = since(before).find(isGrader)!;
    expect(grader.messages[0].content[0].text).toContain('<rubric>\nMust mention the moon.\n</rubric>');
    expect(list.find((e) => e.type === 'span.outcome_evaluation_end')!.result).toBe('satisfied');
  }, 180_000);
});
