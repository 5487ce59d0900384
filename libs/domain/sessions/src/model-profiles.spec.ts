import {
  CONTINUE_TEXT,
  compactionThreshold,
  DEFAULT_MODEL_PROFILE,
  estimatePromptTokens,
  parseModelProfiles,
  profileOf,
  requestParameters,
  withContinuation,
} from './model-profiles';
import { priceOf } from './pricing';
import { compactionPlan, estimateFromUsage } from './transcript';

describe('built-in model profiles', () => {
  it.each([
    ['claude-opus-5', 1_000_000, 128_000, 'adaptive', true],
    ['claude-sonnet-5', 200_000, 64_000, 'adaptive', true],
    ['claude-opus-4-8', 200_000, 128_000, 'adaptive', true],
    ['claude-opus-4-6', 200_000, 128_000, 'adaptive', true],
    ['claude-opus-4-5-20251101', 200_000, 64_000, 'enabled', true],
    ['claude-opus-4-1', 200_000, 32_000, 'enabled', false],
    ['claude-sonnet-4-6', 200_000, 64_000, 'enabled', true],
    ['claude-sonnet-4-5-20250929', 200_000, 64_000, 'enabled', false],
    ['claude-haiku-4-5-20251001', 200_000, 64_000, 'enabled', false],
    ['claude-3-5-haiku-latest', 200_000, 8_192, 'none', false],
    ['my-local-model', 32_000, 4_096, 'none', false],
  ])('%s: window %d, output %d, thinking %s, effort %s', (model, window, output, thinking, effort) => {
    expect(profileOf(model)).toMatchObject({
      context_window: window,
      max_output_tokens: output,
      thinking,
      effort,
      speed: false,
    });
  });

  it('an unknown model gets the documented conservative default, unpriced', () => {
    expect(profileOf('my-local-model')).toEqual(DEFAULT_MODEL_PROFILE);
    expect(priceOf('my-local-model')).toBeUndefined();
  });

  it('prices join the profiles (one home for per-model facts)', () => {
    expect(profileOf('claude-sonnet-4-6').price).toEqual({ input: 3, output: 15 });
    expect(priceOf('claude-sonnet-4-6')).toEqual(profileOf('claude-sonnet-4-6').price);
    expect(priceOf('claude-opus-4-6')).toEqual({ input: 5, output: 25 });
  });
});

describe('MANGO_MODEL_PROFILES overrides', () => {
  it('overrides merge over the built-in profile of that exact id; "*" replaces the default', () => {
    const o = parseModelProfiles(
      '{"claude-sonnet-4-6": {"context_window": 8000, "max_output_tokens": 2048, "thinking": "none"}, "*": {"context_window": 100000}}',
    );
    expect(profileOf('claude-sonnet-4-6', o)).toMatchObject({
      context_window: 8000,
      max_output_tokens: 2048,
      thinking: 'none',
      effort: true,
      price: { input: 3, output: 15 },
    });
    // Other ids of the family keep the built-in profile.
    expect(profileOf('claude-sonnet-4-6-20260101', o).context_window).toBe(200_000);
    expect(profileOf('gateway-model', o)).toEqual({ ...DEFAULT_MODEL_PROFILE, context_window: 100_000 });
  });

  it('empty or unset is no overrides', () => {
    expect(parseModelProfiles(undefined)).toEqual({});
    expect(parseModelProfiles(' ')).toEqual({});
  });

  it.each([
    ['[1]', /must be a JSON object/],
    ['{bad', /must be a JSON object/],
    ['{"m": 5}', /\["m"\] must be an object/],
    ['{"m": {"window": 5}}', /\["m"\]\.window is not a profile key/],
    ['{"m": {"context_window": 10}}', /context_window must be an integer from 1024/],
    ['{"m": {"max_output_tokens": 1.5}}', /max_output_tokens must be an integer/],
    ['{"m": {"thinking": "on"}}', /thinking must be "none", "enabled" or "adaptive"/],
    ['{"m": {"effort": "yes"}}', /effort must be true or false/],
    [
      '{"m": {"context_window": 4096, "max_output_tokens": 4096}}',
      /max_output_tokens \(4096\) must be below context_window/,
    ],
    [
      '{"claude-sonnet-4-6": {"max_output_tokens": 4000}}',
      /thinking_budget_tokens \(8000\) must be below max_output_tokens/,
    ],
  ])('%s is refused', (raw, message) => {
    expect(() => parseModelProfiles(raw)).toThrow(message);
  });
});

describe('request admission and parameters', () => {
  const sonnet = profileOf('claude-sonnet-4-6');
  it('max_tokens is the profile output limit; thinking with its budget; effort where supported', () => {
    expect(requestParameters(sonnet, { effort: { type: 'high' }, speed: 'fast' }, 1_000)).toEqual({
      max_tokens: 64_000,
      thinking: { type: 'enabled', budget_tokens: 8_000 },
      output_config: { effort: 'high' },
    });
  });

  it('adaptive thinking, speed only where the profile allows it, nothing for the default profile', () => {
    expect(
      requestParameters({ ...profileOf('claude-opus-4-8'), speed: true }, { speed: 'fast' }, 10),
    ).toEqual({
      max_tokens: 128_000,
      thinking: { type: 'adaptive' },
      speed: 'fast',
    });
    expect(requestParameters(profileOf('x'), { effort: { type: 'low' }, speed: 'fast' }, 10)).toEqual({
      max_tokens: 4_096,
    });
  });

  it('max_tokens shrinks to what the window leaves; too little left refuses the request', () => {
    expect(requestParameters(sonnet, {}, 190_000)).toMatchObject({
      max_tokens: 10_000,
      thinking: { type: 'enabled', budget_tokens: 8_000 },
    });
    expect(requestParameters(sonnet, {}, 197_000)).toMatchObject({
      max_tokens: 3_000,
      thinking: { type: 'enabled', budget_tokens: 1_976 },
    });
    const refused = requestParameters(sonnet, {}, 198_500);
    expect(refused).toEqual({
      refused: expect.stringMatching(/does not fit the model's 200000-token context window/),
    });
    expect(requestParameters(profileOf('x'), {}, 30_000)).toEqual({ max_tokens: 2_000 });
    expect(requestParameters(profileOf('x'), {}, 31_000)).toHaveProperty('refused');
  });

  it('compaction triggers at 80% of the window unless MANGO_COMPACT_AT_TOKENS overrides it', () => {
    expect(compactionThreshold(sonnet)).toBe(160_000);
    expect(compactionThreshold(profileOf('x'))).toBe(25_600);
    expect(compactionThreshold(sonnet, 1_000)).toBe(1_000);
  });
});

describe('usage-based estimates', () => {
  const ev = (seq: number, type: string, body: Record<string, unknown> = {}) => ({
    id: `e${seq}`,
    seq,
    type,
    body,
  });
  const end = (seq: number, input: number, output: number) =>
    ev(seq, 'span.model_request_end', {
      model_usage: { input_tokens: input, output_tokens: output, cache_read_input_tokens: 100 },
    });

  it('the last measured prompt plus its output plus the text appended since (3 characters a token)', () => {
    const message = ev(3, 'user.message', { content: [{ type: 'text', text: 'x'.repeat(290) }] });
    const events = [ev(1, 'user.message'), end(2, 1_000, 50), message];
    expect(estimateFromUsage(events)).toBe(1_150 + Math.ceil(JSON.stringify(message.body).length / 3));
    expect(estimatePromptTokens(events, { ignored: true })).toBe(estimateFromUsage(events));
  });

  it('without a measurement since the latest compaction, the request text is the estimate', () => {
    const events = [
      end(1, 5_000, 5),
      ev(2, 'session.status_idle'),
      ev(3, 'agent.thread_context_compacted', { _summary: 's', _through_seq: 2 }),
    ];
    expect(estimateFromUsage(events)).toBeUndefined();
    expect(estimatePromptTokens(events, { messages: 'abcdef' })).toBe(
      Math.ceil('{"messages":"abcdef"}'.length / 3),
    );
  });

  it('compaction is planned when the estimate (not only the last prompt) reaches the threshold', () => {
    const idle = ev(3, 'session.status_idle', { stop_reason: { type: 'end_turn' } });
    const events = [ev(1, 'user.message'), end(2, 900, 50), idle];
    expect(compactionPlan(events, 1_200)).toBeUndefined();
    const big = ev(4, 'user.message', { content: [{ type: 'text', text: 'y'.repeat(900) }] });
    expect(compactionPlan([...events, big], 1_200)).toEqual({ throughSeq: 3 });
  });
});

describe('max_tokens continuation', () => {
  it('a transcript ending with the cut reply gets a user message asking for the rest', () => {
    const cut = [
      { role: 'user' as const, content: [{ type: 'text', text: 'hi' }] },
      { role: 'assistant' as const, content: [{ type: 'text', text: 'half' }] },
    ];
    expect(withContinuation(cut)).toEqual([
      ...cut,
      { role: 'user', content: [{ type: 'text', text: CONTINUE_TEXT }] },
    ]);
    expect(withContinuation(cut.slice(0, 1))).toEqual(cut.slice(0, 1));
  });
});
