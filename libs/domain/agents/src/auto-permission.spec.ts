import {
  AUTO_JUDGE_LIMITS,
  autoJudgeMessage,
  autoPermission,
  failedAutoJudgement,
  parseAutoJudgement,
} from './auto-permission';
import { parseAgentCreate } from './parse-agent';
import { evaluatePermission, isAutoPolicy } from './sandbox-tools';

describe('parseAutoJudgement: allow or ask, never a silent deny', () => {
  it.each<[string, string, 'allow' | 'ask', string | undefined, string]>([
    [
      'allow',
      '{"decision":"allow","reason":"reads a file in the task"}',
      'allow',
      undefined,
      'reads a file in the task',
    ],
    [
      'ask',
      '{"decision": "ask", "reason": "deletes the repository"}',
      'ask',
      'judged_ask',
      'deletes the repository',
    ],
    ['a fenced answer', '```json\n{"decision":"allow","reason":"ok"}\n```', 'allow', undefined, 'ok'],
    ['no reason', '{"decision":"allow"}', 'allow', undefined, '(no reason given)'],
    [
      'deny is not a decision',
      '{"decision":"deny","reason":"bad"}',
      'ask',
      'judge_unparsable',
      'the judgement\'s decision was "deny", not "allow" or "ask"',
    ],
    ['prose', 'I think this is fine.', 'ask', 'judge_unparsable', 'the judgement was not JSON'],
    ['a list', '["allow"]', 'ask', 'judge_unparsable', 'the judgement was not a JSON object'],
    ['empty', '', 'ask', 'judge_unparsable', 'the judgement was not JSON'],
    [
      'allow with trailing prose',
      '{"decision":"allow"} sure',
      'ask',
      'judge_unparsable',
      'the judgement was not JSON',
    ],
  ])('%s', (_name, text, permission, code, reason) => {
    const e = parseAutoJudgement(text);
    expect(autoPermission(e)).toBe(permission);
    expect(e.evaluated_permission).toEqual(code ? { type: 'ask', reason_code: code } : { type: 'allow' });
    expect(e.reason).toBe(reason);
  });

  it('keeps at most 500 characters of the reason', () => {
    const e = parseAutoJudgement(JSON.stringify({ decision: 'ask', reason: 'x'.repeat(900) }));
    expect(e.reason).toHaveLength(AUTO_JUDGE_LIMITS.maxReasonChars + 1);
  });

  it('a failed judgement is ask with judge_failed', () => {
    expect(failedAutoJudgement('timed out')).toEqual({
      type: 'auto',
      evaluated_permission: { type: 'ask', reason_code: 'judge_failed' },
      reason: 'timed out',
    });
  });
});

describe('autoJudgeMessage: the fixed layout of the judged call', () => {
  it('shows the instructions and the call', () => {
    expect(
      autoJudgeMessage('Fix the tests.', { kind: 'sandbox', name: 'bash', input: { command: 'ls' } }),
    ).toBe(
      '<agent_instructions>\nFix the tests.\n</agent_instructions>\n<tool_call>\ntool: bash (sandbox tool)\ninput: {"command":"ls"}\n</tool_call>',
    );
    expect(autoJudgeMessage(null, { kind: 'mcp', name: 'search', mcpServerName: 'docs', input: {} })).toBe(
      '<agent_instructions>\n(none)\n</agent_instructions>\n<tool_call>\ntool: search (MCP server "docs")\ninput: {}\n</tool_call>',
    );
  });
});

describe('the auto policy on an Agent', () => {
  const agent = parseAgentCreate({
    name: 'a',
    model: 'm',
    tools: [
      {
        type: 'agent_toolset_20260401',
        default_config: { permission_policy: { type: 'auto' } },
        configs: [
          { name: 'read', permission_policy: { type: 'always_allow' } },
          { name: 'web_search', permission_policy: { type: 'always_allow' } },
          { name: 'web_fetch', permission_policy: { type: 'always_allow' } },
        ],
      },
    ],
  });

  it.each<[string, boolean, string]>([
    ['bash', true, 'ask'],
    ['read', false, 'allow'],
    ['invented', false, 'deny'],
  ])('%s: auto=%s, permission before any judgement %s', (name, auto, permission) => {
    expect(isAutoPolicy(agent, name)).toBe(auto);
    expect(evaluatePermission(agent, name)).toBe(permission);
  });

  it('web tools still require always_allow', () => {
    expect(() =>
      parseAgentCreate({
        name: 'a',
        model: 'm',
        tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'auto' } } }],
      }),
    ).toThrow(/requires permission_policy always_allow/);
  });
});
