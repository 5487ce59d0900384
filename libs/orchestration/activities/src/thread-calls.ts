import {
  ADVISOR_REF,
  type CoordinatorSnapshot,
  decidePlatformCall,
  MAX_RUNNING_THREADS,
  threadAgentName,
} from '@mango/domain-sessions';
import { primaryThreadId, type SessionEntity, SessionThreadRepository } from '@mango/persistence';
import type { EntityManager } from 'typeorm';
import { internal, type StoredEvent } from './step-events';

const threads = new SessionThreadRepository();

/** What a platform call wrote for other Threads, and the call's own result. */
export interface PlatformCallDone {
  events: StoredEvent[];
  result: { text: string; isError: boolean };
}

/**
 * Carries out a coordinator's platform call in the transaction that records its step (ADR 0017
 * "Orchestration"; the decision is `decidePlatformCall`, libs/domain/sessions thread-orchestration.ts):
 * - `list_agents`: the roster, as the result;
 * - `send_to_agent`: the roster member's live Thread (a follow-up) or a new one (`session.thread_created`,
 *   refused past 25 running delegates), `agent.thread_message_sent` on the primary and the delegate's
 *   `agent.thread_message_received` — runnable input that starts its workflow through the outbox;
 * - `consult_advisor`: a new Advisor Thread each time, messaged the same way; its answer arrives on the
 *   primary as a message, and the Thread then terminates itself.
 * Keys are under `key` (the step's `…:platform:<i>`), so a retried step writes nothing twice.
 */
export async function carryOutPlatformCall(
  tx: EntityManager,
  s: SessionEntity,
  made: {
    snapshot: CoordinatorSnapshot;
    name: string;
    input: Record<string, unknown>;
    key: string;
    now: Date;
  },
): Promise<PlatformCallDone> {
  const { snapshot, key, now } = made;
  const call = decidePlatformCall(made.name, made.input, snapshot);
  if (call.kind === 'error') return { events: [], result: { text: call.text, isError: true } };
  if (call.kind === 'list') return { events: [], result: { text: call.text, isError: false } };
  const primary = primaryThreadId(s.id);
  const ref = call.kind === 'send' ? call.member.ref : ADVISOR_REF;
  const toName = threadAgentName(snapshot, ref);
  let thread = call.kind === 'send' ? await threads.findDelegate(tx, s.id, ref) : null;
  const events: StoredEvent[] = [];
  if (!thread) {
    if (call.kind === 'send' && (await threads.countRunningDelegates(tx, s.id)) >= MAX_RUNNING_THREADS)
      return {
        events: [],
        result: {
          text: `${MAX_RUNNING_THREADS} agents are already working; wait for one to report before starting another`,
          isError: true,
        },
      };
    thread = await threads.createChild(tx, s.id, primary, ref, now);
    events.push({
      ...internal(
        'session.thread_created',
        { session_thread_id: thread.id, agent_name: toName },
        `${key}:created`,
      ),
      sessionThreadId: thread.id,
    });
  }
  const text = call.kind === 'send' ? call.message : call.question;
  const content = [{ type: 'text', text }];
  events.push(
    internal(
      'agent.thread_message_sent',
      { to_session_thread_id: thread.id, to_agent_name: toName, content },
      `${key}:sent`,
    ),
    {
      ...internal(
        'agent.thread_message_received',
        {
          from_session_thread_id: primary,
          from_agent_name: threadAgentName(snapshot, null),
          content,
        },
        `${key}:received`,
      ),
      sessionThreadId: thread.id,
      // The delegate's input: it wakes its Thread (and needs the Session's worker, like a message).
      runnable: true,
    },
  );
  const result =
    call.kind === 'send'
      ? `Sent to ${toName} (thread ${thread.id}). Its report will arrive as a message when it finishes.`
      : `Asked the advisor (thread ${thread.id}). Its answer will arrive as a message.`;
  return { events, result: { text: result, isError: false } };
}
