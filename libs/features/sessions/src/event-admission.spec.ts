import { DomainError, ErrorCode } from '@mango/domain-kernel';
import type { ClientEvent } from '@mango/domain-sessions';
import {
  answerOf,
  answerTargetTypes,
  checkBudgetPause,
  checkEventCount,
  checkPoster,
  isAnswerable,
} from './event-admission';

const message: ClientEvent = { type: 'user.message', content: [{ type: 'text', text: 'hi' }] };
const interrupt: ClientEvent = { type: 'user.interrupt' };
const result: ClientEvent = { type: 'user.tool_result', tool_use_id: 'sevt_1', content: [], is_error: false };
const confirmation: ClientEvent = { type: 'user.tool_confirmation', tool_use_id: 'sevt_2', result: 'allow' };
const custom: ClientEvent = {
  type: 'user.custom_tool_result',
  custom_tool_use_id: 'sevt_3',
  content: [],
  is_error: false,
};

function codeOf(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof DomainError ? err.code : 'not a DomainError';
  }
}

describe('event admission rules', () => {
  it('refuses more events than the server admits per request (413), counting only arrays', () => {
    expect(codeOf(() => checkEventCount([1, 2, 3], 'events', 2))).toBe(ErrorCode.TooLarge);
    expect(codeOf(() => checkEventCount([1, 2], 'events', 2))).toBeUndefined();
    expect(codeOf(() => checkEventCount(undefined, 'events', 0))).toBeUndefined();
  });

  it.each<[string, boolean, ClientEvent, string | undefined]>([
    ['a key posts a message', false, message, undefined],
    ['a key posts an interrupt', false, interrupt, undefined],
    ['a key posts a confirmation', false, confirmation, undefined],
    ['a key posts a custom tool result', false, custom, undefined],
    ['a key may not post a sandbox tool result', false, result, ErrorCode.Permission],
    ['a Work token posts a tool result', true, result, undefined],
    ['a Work token may not post a message', true, message, ErrorCode.Permission],
    ['a Work token may not post a confirmation', true, confirmation, ErrorCode.Permission],
    ['a Work token posts a custom tool result (operator custom tools)', true, custom, undefined],
    ['a Work token may not post an interrupt', true, interrupt, ErrorCode.Permission],
  ])('%s', (_name, fromWorker, event, code) => {
    expect(codeOf(() => checkPoster(fromWorker, [event]))).toBe(code);
  });

  it('a budget pause accepts only settle events, and nothing is refused without a pause', () => {
    for (const e of [result, confirmation, custom, interrupt])
      expect(codeOf(() => checkBudgetPause(true, [e]))).toBeUndefined();
    expect(codeOf(() => checkBudgetPause(true, [interrupt, message]))).toBe(ErrorCode.InvalidRequest);
    expect(codeOf(() => checkBudgetPause(false, [message]))).toBeUndefined();
  });

  it('what an answering event answers, and how "once" is enforced', () => {
    expect(answerOf(message)).toBeUndefined();
    expect(answerOf(interrupt)).toBeUndefined();
    const r = answerOf(result)!;
    expect(r).toMatchObject({
      targetId: 'sevt_1',
      targetType: 'agent.tool_use',
      needsAsk: false,
      key: undefined,
    });
    expect(r.body).toEqual({ tool_use_id: 'sevt_1', content: [], is_error: false });
    expect(answerTargetTypes(r)).toEqual(['agent.tool_use']);
    const c = answerOf(confirmation)!;
    expect(c).toMatchObject({ targetId: 'sevt_2', needsAsk: true, key: 'confirmation:sevt_2' });
    expect(answerTargetTypes(c)).toEqual(['agent.tool_use', 'agent.mcp_tool_use']);
    expect(answerTargetTypes(answerOf(custom)!)).toEqual(['agent.custom_tool_use']);
  });

  it('a confirmation answers only a call that asked; results answer any call of their kind', () => {
    const c = answerOf(confirmation)!;
    expect(isAnswerable(c, { body: { evaluated_permission: 'ask' } })).toBe(true);
    expect(isAnswerable(c, { body: { evaluated_permission: 'allow' } })).toBe(false);
    expect(isAnswerable(c, null)).toBe(false);
    const r = answerOf(result)!;
    expect(isAnswerable(r, { body: { evaluated_permission: 'allow' } })).toBe(true);
    expect(isAnswerable(r, null)).toBe(false);
  });

  it('a call Mango answered (Skill activation) or the endpoint ran (web tools) takes no answer', () => {
    const r = answerOf(result)!;
    expect(isAnswerable(r, { body: { evaluated_permission: 'allow', _answered: true } })).toBe(false);
    expect(
      isAnswerable(r, { body: { evaluated_permission: 'allow', _server_tool_use_id: 'srvtoolu_1' } }),
    ).toBe(false);
  });
});
