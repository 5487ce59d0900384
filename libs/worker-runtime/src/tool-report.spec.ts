import { parseToolReport, TOOL_REPORT_MSG, toolReportWindow } from './tool-report';

/** A pino line as the item runner writes it. */
const line = (o: Record<string, unknown>) =>
  JSON.stringify({ level: 30, time: 1, service: 'item', ...o, msg: TOOL_REPORT_MSG });
const good = {
  tool: 'bash',
  tool_use_id: 'sevt_01abc',
  tool_kind: 'sandbox',
  outcome: 'ok',
  started_at: 1_767_000_000_000,
  duration_ms: 12.5,
  is_error: false,
};
const custom = new Set(['lookup']);

describe('parseToolReport', () => {
  it('reads the runner line (ids, names, timing and outcome only)', () => {
    expect(parseToolReport(line(good))).toEqual({
      tool: 'bash',
      tool_use_id: 'sevt_01abc',
      tool_kind: 'sandbox',
      outcome: 'ok',
      started_at: 1_767_000_000_000,
      duration_ms: 12.5,
    });
  });

  it.each(['ok', 'error', 'interrupted'])('accepts the outcome %s', (outcome) => {
    expect(parseToolReport(line({ ...good, outcome }))?.outcome).toBe(outcome);
  });

  it('accepts a custom tool the worker serves', () => {
    expect(parseToolReport(line({ ...good, tool: 'lookup', tool_kind: 'custom' }), custom)).toMatchObject({
      tool: 'lookup',
      tool_kind: 'custom',
    });
  });

  it.each([
    ['another message', JSON.stringify({ ...good, msg: 'item output' })],
    ['not JSON', `tool call finished ${JSON.stringify(good)}`],
    ['a JSON array', JSON.stringify([TOOL_REPORT_MSG])],
    ['an unknown sandbox tool (bounded metric labels)', line({ ...good, tool: 'rm_rf' })],
    ['a custom tool the worker does not serve', line({ ...good, tool: 'other', tool_kind: 'custom' })],
    ['a custom name claimed as sandbox', line({ ...good, tool: 'lookup' })],
    ['an unknown kind', line({ ...good, tool_kind: 'mcp' })],
    ['an unknown outcome', line({ ...good, outcome: 'cancelled' })],
    ['a long id', line({ ...good, tool_use_id: 'x'.repeat(129) })],
    ['an id with other characters', line({ ...good, tool_use_id: 'a b' })],
    ['a negative duration', line({ ...good, duration_ms: -1 })],
    ['a non-finite duration', line({ ...good, duration_ms: 'NaN' })],
    ['a duration beyond a day', line({ ...good, duration_ms: 86_400_001 })],
    ['a missing start', line({ ...good, started_at: undefined })],
  ])('ignores %s', (_, text) => {
    expect(parseToolReport(text, custom)).toBeUndefined();
  });
});

describe('toolReportWindow', () => {
  const since = 1_000_000;
  const now = 1_060_000;
  it.each([
    ['inside the item window: as reported', 1_010_000, 500, { start: 1_010_000, end: 1_010_500 }],
    ['starting before the item: from the item start', 900_000, 200_000, { start: since, end: now }],
    ['starting before the item, short: from the item start', 900_000, 10, { start: since, end: since + 10 }],
    ['ending in the future: until now', 1_059_000, 5_000, { start: 1_059_000, end: now }],
    ['starting in the future: an empty span now', 2_000_000, 5, { start: now, end: now }],
  ])('%s', (_, started_at, duration_ms, expected) => {
    expect(toolReportWindow({ started_at, duration_ms }, since, now)).toEqual(expected);
  });
});
