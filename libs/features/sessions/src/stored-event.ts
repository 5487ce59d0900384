import { ClientEvent, isRunnable } from '@mango/domain-sessions';
import { newId } from '@mango/platform-ids';
import { currentTraceparent } from '@mango/platform-tracing';

/** A client event as the Session log stores it (body, processed, runnable). */
export const toStored = (e: ClientEvent) => {
  const { type, ...all } = e;
  // An answer's echoed session_thread_id is not stored in its body (the event's Thread is its column).
  const { session_thread_id: _echoed, ...answerFields } = all as typeof all & { session_thread_id?: string };
  const fields = type === 'user.interrupt' ? all : answerFields;
  // A defined outcome is echoed with its server id (`outc_`), and processed on receipt.
  const body = type === 'user.define_outcome' ? { ...fields, outcome_id: newId('outcome') } : fields;
  // A message or interrupt keeps the request's trace context (an internal `_` field, never rendered):
  // the orchestrator continues that trace for the turn it starts. No trace context while tracing is off.
  const traceparent = type === 'user.message' || type === 'user.interrupt' ? currentTraceparent() : undefined;
  return {
    type,
    body: (traceparent ? { ...body, _traceparent: traceparent } : body) as Record<string, unknown>,
    processed: type === 'user.define_outcome',
    runnable: isRunnable(e),
  };
};
