import {
  BUDGET_CHANGED,
  changesBudget,
  isRunnableKind,
  SESSION_EVENT_KINDS,
  settlesPendingAction,
  THREAD_ARCHIVE_REQUESTED,
  wakesWorkflow,
  workflowWake,
  WorkflowWake,
} from './event-kinds';

/** Every kind × every question: [runnable, wakes the workflow as, settles, changes the budget]. */
const TABLE: Record<string, [boolean, WorkflowWake | undefined, boolean, boolean]> = {
  'user.message': [true, 'turn', false, false],
  'user.interrupt': [false, 'interrupt', true, false],
  'user.tool_result': [false, 'tool_result', true, false],
  'user.tool_confirmation': [true, 'turn', true, false],
  'user.custom_tool_result': [true, 'turn', true, false],
  'user.define_outcome': [true, 'outcome', false, false],
  'agent.message': [false, undefined, false, false],
  'agent.tool_use': [false, undefined, false, false],
  'agent.tool_result': [false, undefined, false, false],
  'agent.custom_tool_use': [false, undefined, false, false],
  'agent.mcp_tool_use': [false, undefined, false, false],
  'agent.mcp_tool_result': [false, undefined, false, false],
  'agent.thread_context_compacted': [false, undefined, false, false],
  'session.status_running': [false, undefined, false, false],
  'session.status_idle': [false, undefined, false, false],
  'session.status_rescheduled': [false, undefined, false, false],
  'session.status_terminated': [false, 'terminate', false, false],
  'session.error': [false, undefined, false, false],
  'session.updated': [false, undefined, false, false],
  'session.deleted': [false, undefined, false, false],
  'session.usage': [false, undefined, false, false],
  'span.model_request_start': [false, undefined, false, false],
  'span.model_request_end': [false, undefined, false, false],
  'span.outcome_evaluation_start': [false, undefined, false, false],
  'span.outcome_evaluation_ongoing': [false, undefined, false, false],
  'span.outcome_evaluation_end': [false, undefined, false, false],
  [BUDGET_CHANGED]: [false, 'budget', false, true],
  'session.thread_created': [false, undefined, false, false],
  'session.thread_status_running': [false, undefined, false, false],
  'session.thread_status_idle': [false, undefined, false, false],
  'session.thread_status_rescheduled': [false, undefined, false, false],
  'session.thread_status_terminated': [false, undefined, false, false],
  'agent.thread_message_sent': [false, undefined, false, false],
  'agent.thread_message_received': [false, 'turn', false, false],
  [THREAD_ARCHIVE_REQUESTED]: [false, 'archive', false, false],
};

describe('event-kind vocabulary', () => {
  it('the table covers every kind the Session log knows, and nothing else', () => {
    expect(Object.keys(TABLE).sort()).toEqual([...SESSION_EVENT_KINDS].sort());
  });

  it.each(Object.entries(TABLE))('%s', (kind, [runnable, wake, settles, budget]) => {
    expect(isRunnableKind(kind)).toBe(runnable);
    expect(workflowWake(kind)).toBe(wake);
    expect(wakesWorkflow(kind)).toBe(wake !== undefined);
    expect(settlesPendingAction(kind)).toBe(settles);
    expect(changesBudget(kind)).toBe(budget);
  });

  it('runnable kinds all wake the workflow (a turn never starts without a signal)', () => {
    for (const kind of SESSION_EVENT_KINDS) if (isRunnableKind(kind)) expect(wakesWorkflow(kind)).toBe(true);
  });

  it('an unknown kind is nothing', () => {
    expect(workflowWake('user.shout')).toBeUndefined();
    expect(isRunnableKind('user.shout')).toBe(false);
    expect(settlesPendingAction('user.shout')).toBe(false);
  });
});
