import { DomainError } from '@mango/domain-kernel';
import { transcript } from './transcript';
import {
  activeOutcome,
  evaluationResult,
  GRADER_SYSTEM,
  graderRequest,
  nextOutcome,
  OUTCOME_LIMITS,
  OutcomeLogEvent,
  OutcomeProgress,
  outcomeEvaluations,
  parseDefineOutcome,
  parseGraderAnswer,
  resolvedFileRubric,
  revisesAfter,
} from './outcome';

const FILE = 'file_01HZZZZZZZZZZZZZZZZZZZZZZZ';

describe('user.define_outcome input', () => {
  it('reads a text rubric with the default max_iterations', () => {
    expect(
      parseDefineOutcome(
        { type: 'user.define_outcome', description: 'd', rubric: { type: 'text', content: 'r' } },
        'e',
      ),
    ).toEqual({
      type: 'user.define_outcome',
      description: 'd',
      rubric: { type: 'text', content: 'r' },
      max_iterations: 3,
    });
  });

  it('reads a file rubric and an explicit max_iterations', () => {
    expect(
      parseDefineOutcome(
        {
          type: 'user.define_outcome',
          description: 'd',
          rubric: { type: 'file', file_id: FILE },
          max_iterations: 20,
        },
        'e',
      ),
    ).toMatchObject({ rubric: { type: 'file', file_id: FILE }, max_iterations: 20 });
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['no description', { rubric: { type: 'text', content: 'r' } }, /e\.description/],
    ['empty description', { description: '', rubric: { type: 'text', content: 'r' } }, /e\.description/],
    ['no rubric', { description: 'd' }, /e\.rubric/],
    ['unknown rubric type', { description: 'd', rubric: { type: 'url', url: 'x' } }, /e\.rubric\.type/],
    ['empty text rubric', { description: 'd', rubric: { type: 'text', content: '' } }, /e\.rubric\.content/],
    [
      'rubric over 262,144 characters',
      { description: 'd', rubric: { type: 'text', content: 'x'.repeat(OUTCOME_LIMITS.rubric + 1) } },
      /e\.rubric\.content/,
    ],
    ['bad file id', { description: 'd', rubric: { type: 'file', file_id: 'nope' } }, /file_ id/],
    [
      'extra rubric field',
      { description: 'd', rubric: { type: 'text', content: 'r', file_id: FILE } },
      /file_id/,
    ],
    [
      'max_iterations 0',
      { description: 'd', rubric: { type: 'text', content: 'r' }, max_iterations: 0 },
      /at least 1/,
    ],
    [
      'max_iterations 21',
      { description: 'd', rubric: { type: 'text', content: 'r' }, max_iterations: 21 },
      /at most 20/,
    ],
    [
      'max_iterations 1.5',
      { description: 'd', rubric: { type: 'text', content: 'r' }, max_iterations: 1.5 },
      /integer/,
    ],
    [
      'unknown field',
      { description: 'd', rubric: { type: 'text', content: 'r' }, outcome_id: 'outc_x' },
      /outcome_id/,
    ],
  ])('refuses %s (400)', (_name, fields, message) => {
    expect(() => parseDefineOutcome({ type: 'user.define_outcome', ...fields }, 'e')).toThrow(DomainError);
    expect(() => parseDefineOutcome({ type: 'user.define_outcome', ...fields }, 'e')).toThrow(message);
  });

  it('a File rubric becomes its text; empty or too long is refused', () => {
    expect(resolvedFileRubric('e', FILE, 'rubric')).toEqual({ type: 'text', content: 'rubric' });
    expect(() => resolvedFileRubric('e', FILE, '')).toThrow(/empty/);
    expect(() => resolvedFileRubric('e', FILE, 'x'.repeat(OUTCOME_LIMITS.rubric + 1))).toThrow(
      /at most 262144/,
    );
  });
});

describe('the outcome state machine', () => {
  const at = (state: OutcomeProgress['state'], iteration = 0): OutcomeProgress => ({
    state,
    iteration,
    maxIterations: 3,
  });
  it.each<[OutcomeProgress, Parameters<typeof nextOutcome>[1], OutcomeProgress]>([
    [at('pending'), { type: 'evaluation_start' }, at('evaluating')],
    [at('running', 1), { type: 'evaluation_start' }, at('evaluating', 1)],
    [at('evaluating'), { type: 'evaluation_end', result: 'needs_revision' }, at('running', 1)],
    [at('evaluating', 1), { type: 'evaluation_end', result: 'satisfied' }, at('satisfied', 1)],
    [at('evaluating'), { type: 'evaluation_end', result: 'failed' }, at('failed')],
    [
      at('evaluating', 2),
      { type: 'evaluation_end', result: 'max_iterations_reached' },
      at('max_iterations_reached', 2),
    ],
    [at('evaluating'), { type: 'evaluation_end', result: 'interrupted' }, at('interrupted')],
    [at('pending'), { type: 'evaluation_end', result: 'interrupted' }, at('interrupted')],
    [at('running', 1), { type: 'interrupt' }, at('interrupted', 1)],
    [at('pending'), { type: 'interrupt' }, at('interrupted')],
  ])('%j + %j → %j', (from, input, to) => {
    expect(nextOutcome(from, input)).toEqual(to);
  });

  it.each<[OutcomeProgress, Parameters<typeof nextOutcome>[1]]>([
    [at('satisfied'), { type: 'evaluation_start' }],
    [at('interrupted'), { type: 'interrupt' }],
    [at('evaluating'), { type: 'evaluation_start' }],
    [at('pending'), { type: 'evaluation_end', result: 'satisfied' }],
  ])('%j does not take %j', (from, input) => {
    expect(() => nextOutcome(from, input)).toThrow();
  });

  it.each<[Parameters<typeof evaluationResult>, string, boolean]>([
    [['satisfied', 0, 3], 'satisfied', false],
    [['failed', 1, 3], 'failed', false],
    [['needs_revision', 0, 3], 'needs_revision', true],
    [['needs_revision', 1, 3], 'needs_revision', true],
    [['needs_revision', 2, 3], 'max_iterations_reached', true],
    [['needs_revision', 0, 1], 'max_iterations_reached', true],
    [['satisfied', 2, 3], 'satisfied', false],
  ])('grading %j is %s (revision turn: %s)', (args, result, revises) => {
    const r = evaluationResult(...args);
    expect(r).toBe(result);
    expect(revisesAfter(r)).toBe(revises);
  });
});

describe('session.outcome_evaluations from the log', () => {
  let seq = 0;
  const t = (s: number) => new Date(Date.UTC(2026, 11, 1, 0, 0, s));
  const ev = (type: string, body: Record<string, unknown>): OutcomeLogEvent => ({
    type,
    seq: ++seq,
    body,
    createdAt: t(seq),
  });
  const defined = (id = 'outc_1', max = 3) =>
    ev('user.define_outcome', {
      outcome_id: id,
      description: 'Write it',
      rubric: { type: 'text', content: 'R' },
      max_iterations: max,
    });
  const start = (iteration: number, id = 'outc_1') =>
    ev('span.outcome_evaluation_start', { outcome_id: id, iteration });
  const end = (iteration: number, result: string, explanation = `e${iteration}`, id = 'outc_1') =>
    ev('span.outcome_evaluation_end', { outcome_id: id, iteration, result, explanation });

  it('pending, evaluating, running after needs_revision, then satisfied with completed_at', () => {
    const log = [defined()];
    expect(outcomeEvaluations(log)).toEqual([
      {
        type: 'outcome_evaluation',
        outcome_id: 'outc_1',
        description: 'Write it',
        iteration: 0,
        result: 'pending',
        explanation: null,
        completed_at: null,
      },
    ]);
    log.push(start(0));
    expect(outcomeEvaluations(log)[0]).toMatchObject({ result: 'evaluating', iteration: 0 });
    log.push(end(0, 'needs_revision', 'add tests'));
    expect(outcomeEvaluations(log)[0]).toMatchObject({
      result: 'running',
      iteration: 1,
      explanation: 'add tests',
    });
    expect(activeOutcome(log)).toMatchObject({
      outcome_id: 'outc_1',
      iteration: 1,
      maxIterations: 3,
      rubric: 'R',
    });
    log.push(start(1), end(1, 'satisfied', 'good'));
    const [v] = outcomeEvaluations(log);
    expect(v).toMatchObject({ result: 'satisfied', iteration: 1, explanation: 'good' });
    expect(v!.completed_at).toBe(log[log.length - 1]!.createdAt.toISOString());
    expect(activeOutcome(log)).toBeUndefined();
  });

  it('an interrupt before any grading, and a second outcome after a terminal one', () => {
    const log = [defined('outc_a'), end(0, 'interrupted', '', 'outc_a'), defined('outc_b')];
    expect(outcomeEvaluations(log).map((v) => [v.outcome_id, v.result])).toEqual([
      ['outc_a', 'interrupted'],
      ['outc_b', 'pending'],
    ]);
    expect(activeOutcome(log)?.outcome_id).toBe('outc_b');
  });

  it('ignores spans of unknown outcomes and out-of-order spans', () => {
    const log = [start(0, 'outc_x'), defined(), end(0, 'satisfied')];
    expect(outcomeEvaluations(log).map((v) => v.result)).toEqual(['pending']);
  });
});

describe('the grader', () => {
  it('sees the task, the rubric and the transcript only', () => {
    const req = graderRequest({
      description: 'Write a haiku',
      rubric: '5-7-5 syllables',
      iteration: 1,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'here' },
            { type: 'tool_use', id: 'sevt_1', name: 'write', input: { path: '/a' } },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'sevt_1', content: 'ok', is_error: false }],
        },
      ],
    });
    expect(req.system).toBe(GRADER_SYSTEM);
    expect(Object.keys(req)).toEqual(['system', 'messages']);
    expect(req.messages).toHaveLength(1);
    const text = req.messages[0]!.content[0]!.text;
    expect(text).toContain('<task>\nWrite a haiku\n</task>');
    expect(text).toContain('<rubric>\n5-7-5 syllables\n</rubric>');
    expect(text).toContain(
      '[user] go\n[assistant] here\n[assistant tool call write] {"path":"/a"}\n[tool result] ok',
    );
    expect(text).toContain('evaluation 2');
  });

  it.each<[string, string, string]>([
    ['{"result":"satisfied","explanation":"ok"}', 'satisfied', 'ok'],
    ['  {"result":"needs_revision","explanation":"more"}\n', 'needs_revision', 'more'],
    ['```json\n{"result":"failed","explanation":"impossible"}\n```', 'failed', 'impossible'],
  ])('reads %j as %s', (answer, verdict, explanation) => {
    expect(parseGraderAnswer(answer)).toEqual({ verdict, explanation });
  });

  it.each<[string, RegExp]>([
    ['looks good to me', /not JSON/],
    ['["satisfied"]', /not a JSON object/],
    ['{"result":"pass","explanation":"x"}', /result must be/],
    ['{"result":"satisfied"}', /explanation must be a string/],
    ['Sure! {"result":"satisfied","explanation":"x"}', /not JSON/],
    ['', /not JSON/],
  ])('a malformed answer %j is a failed verdict, never a pass', (answer, why) => {
    const r = parseGraderAnswer(answer);
    expect(r.verdict).toBe('failed');
    expect(r.explanation).toMatch(why);
  });
});

describe('outcomes in the agent transcript', () => {
  let seq = 0;
  const ev = (type: string, body: Record<string, unknown> = {}) => ({
    id: `sevt_${++seq}`,
    seq: String(seq),
    type,
    body,
    toolUseId: null,
  });
  it('the outcome is the task; needs_revision feedback is the next input; satisfied adds nothing', () => {
    const log = [
      ev('user.define_outcome', {
        outcome_id: 'outc_1',
        description: 'Write X',
        rubric: { type: 'text', content: 'R' },
      }),
      ev('session.status_running'),
      ev('agent.message', { content: [{ type: 'text', text: 'draft' }] }),
      ev('span.outcome_evaluation_start', { outcome_id: 'outc_1', iteration: 0 }),
      ev('span.outcome_evaluation_end', {
        outcome_id: 'outc_1',
        iteration: 0,
        result: 'needs_revision',
        explanation: 'more',
      }),
      ev('agent.message', { content: [{ type: 'text', text: 'better' }] }),
      ev('span.outcome_evaluation_end', {
        outcome_id: 'outc_1',
        iteration: 1,
        result: 'satisfied',
        explanation: 'ok',
      }),
    ];
    const messages = transcript(log as never);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    const first = messages[0]!.content[0] as { text: string };
    expect(first.text).toContain('<description>\nWrite X\n</description>');
    expect(first.text).toContain('<rubric>\nR\n</rubric>');
    expect((messages[2]!.content[0] as { text: string }).text).toMatch(
      /^<outcome_evaluation iteration="0" result="needs_revision">\nmore\n<\/outcome_evaluation>/,
    );
  });

  it('an outcome defined during a turn joins the transcript after that turn, like a message', () => {
    const log = [
      ev('user.message', { content: [{ type: 'text', text: 'hi' }] }),
      ev('session.status_running'),
      ev('user.define_outcome', {
        outcome_id: 'outc_2',
        description: 'Later',
        rubric: { type: 'text', content: 'R' },
      }),
      ev('agent.message', { content: [{ type: 'text', text: 'hello' }] }),
      ev('session.status_idle', { stop_reason: { type: 'end_turn' } }),
    ];
    const messages = transcript(log as never);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect((messages[2]!.content[0] as { text: string }).text).toContain('Later');
  });
});
