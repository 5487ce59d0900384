import {
  closesOpenCalls,
  DENIED_BY_POLICY_MESSAGE,
  DENIED_BY_USER_MESSAGE,
  INTERRUPTED_TOOL_MESSAGE,
  LogEvent,
} from './tool-calls';
import { outcomeTaskText, revisesAfter, revisionText, type EvaluationResult } from './outcome';

/** Messages API shapes the transcript produces (structurally the model adapter's request types). */
export type TranscriptBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | {
      type: 'tool_result';
      tool_use_id: string;
      content: string | Array<{ type: 'text'; text: string }>;
      is_error: boolean;
    }
  /** A call the model endpoint ran itself (web tools), and its result block exactly as it came. */
  | { type: 'server_tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'web_search_tool_result' | 'web_fetch_tool_result'; tool_use_id: string; content: unknown };

export interface TranscriptMessage {
  role: 'user' | 'assistant';
  content: TranscriptBlock[];
}

type Content = Array<{ type: string; text?: string; source?: { data?: string }; title?: string | null }>;

const resultContent = (content: Content) =>
  content.length ? content.map((b) => ({ type: 'text' as const, text: b.text ?? '' })) : '(no output)';

/**
 * The model transcript from the durable log: user messages (text + inline text documents), replies,
 * tool calls (the agent.tool_use event id is the tool_use id) and their results. Calls the policy or the
 * user denied, and calls an interrupt closed, get an error result so the model learns they did not run
 * and every tool_use is followed by its tool_result, as the Messages API requires.
 */
export function transcript(events: LogEvent[]): TranscriptMessage[] {
  const messages: TranscriptMessage[] = [];
  // After a compaction, the model sees its summary in place of every event it covers.
  const compaction = latestCompaction(events);
  if (compaction) {
    messages.push({ role: 'user', content: [{ type: 'text', text: summaryText(compaction.summary) }] });
    events = events.filter((e) => Number(e.seq) > compaction.throughSeq && e.type !== COMPACTED);
  }
  const push = (role: 'user' | 'assistant', blocks: TranscriptBlock[]) => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: [...blocks] });
  };
  const errorResult = (id: string, text: string) =>
    push('user', [{ type: 'tool_result', tool_use_id: id, content: text, is_error: true }]);
  const open = new Set<string>();
  // A result event answers its open call once: the model sees the result as the next user content.
  const answer = (id: string, e: LogEvent) =>
    push('user', [
      {
        type: 'tool_result',
        tool_use_id: id,
        content: resultContent((e.body.content ?? []) as Content),
        is_error: e.body.is_error === true,
      },
    ]);
  // A message sent while a turn runs is input for the next turn: it joins the transcript after the
  // turn's idle, not between the turn's own model calls (where it sits in the log).
  let inTurn = false;
  let deferred: LogEvent[] = [];
  const userMessage = (e: LogEvent) => {
    const content = (e.body.content ?? []) as Content;
    push(
      'user',
      content.map((b) => ({
        type: 'text' as const,
        text:
          b.type === 'text'
            ? b.text!
            : `<document${b.title ? ` title="${b.title}"` : ''}>\n${b.source?.data ?? ''}\n</document>`,
      })),
    );
  };
  const userInput = (e: LogEvent) => {
    if (e.type === 'agent.thread_message_received') {
      push('user', [{ type: 'text', text: threadMessageText(e.body) }]);
    } else if (e.type === 'user.define_outcome') {
      const rubric = e.body.rubric as { content?: string } | undefined;
      push('user', [
        { type: 'text', text: outcomeTaskText(String(e.body.description), rubric?.content ?? '') },
      ]);
    } else userMessage(e);
  };
  for (const e of events) {
    const content = (e.body.content ?? []) as Content;
    switch (e.type) {
      case 'session.status_running':
        inTurn = true;
        break;
      case 'session.status_idle':
        inTurn = false;
        break;
      case 'user.message':
      case 'user.define_outcome':
      case 'agent.thread_message_received':
        if (inTurn) deferred.push(e);
        else userInput(e);
        break;
      case 'agent.thinking':
        // The reply's thinking blocks, exactly as returned (signatures intact), lead its assistant content.
        push('assistant', (e.body._blocks ?? []) as TranscriptBlock[]);
        break;
      case 'span.outcome_evaluation_end': {
        // The grader's feedback is the input of the revision turn that follows it.
        const result = e.body.result as EvaluationResult;
        if (revisesAfter(result))
          push('user', [
            {
              type: 'text',
              text: revisionText(result, Number(e.body.iteration), String(e.body.explanation ?? '')),
            },
          ]);
        break;
      }
      case 'agent.message':
        push(
          'assistant',
          content.filter((b) => b.type === 'text').map((b) => ({ type: 'text' as const, text: b.text! })),
        );
        break;
      case 'agent.tool_use':
      case 'agent.custom_tool_use':
        if (e.type === 'agent.tool_use' && typeof e.body._server_tool_use_id === 'string') {
          // Run by the model endpoint: its own id, no result to wait for (the endpoint sent it along).
          push('assistant', [
            {
              type: 'server_tool_use',
              id: e.body._server_tool_use_id,
              name: e.body.name as string,
              input: e.body.input as Record<string, unknown>,
            },
          ]);
          break;
        }
        push('assistant', [
          {
            type: 'tool_use',
            id: e.id,
            name: e.body.name as string,
            input: e.body.input as Record<string, unknown>,
          },
        ]);
        if (e.body.evaluated_permission === 'deny') errorResult(e.id, DENIED_BY_POLICY_MESSAGE);
        else open.add(e.id);
        break;
      case 'agent.mcp_tool_use':
        // The model called it by its declared name (`mcp__<server>__<tool>`), kept in an internal field.
        push('assistant', [
          {
            type: 'tool_use',
            id: e.id,
            name:
              (e.body._model_name as string | undefined) ??
              `mcp__${String(e.body.mcp_server_name)}__${String(e.body.name)}`,
            input: e.body.input as Record<string, unknown>,
          },
        ]);
        if (e.body.evaluated_permission === 'deny') errorResult(e.id, DENIED_BY_POLICY_MESSAGE);
        else open.add(e.id);
        break;
      case 'agent.mcp_tool_result': {
        const id = e.body.mcp_tool_use_id as string;
        if (!open.delete(id)) break;
        answer(id, e);
        break;
      }
      case 'agent.tool_result': {
        const block = e.body._server_block as Extract<TranscriptBlock, { tool_use_id: string }> | undefined;
        if (block) {
          push('assistant', [block]);
          break;
        }
        // Answered by Mango (a Skill activation).
        const id = e.body.tool_use_id as string;
        if (!open.delete(id)) break;
        answer(id, e);
        break;
      }
      case 'user.tool_confirmation':
        if (e.body.result === 'deny' && open.delete(e.body.tool_use_id as string))
          errorResult(
            e.body.tool_use_id as string,
            (e.body.deny_message as string | undefined) ?? DENIED_BY_USER_MESSAGE,
          );
        break;
      case 'user.custom_tool_result':
      case 'user.tool_result': {
        const id = (e.toolUseId ?? e.body.tool_use_id ?? e.body.custom_tool_use_id) as string;
        if (!open.delete(id)) break; // answers a closed call: the model already saw it interrupted
        answer(id, e);
        break;
      }
    }
    if (closesOpenCalls(e)) {
      for (const id of open) errorResult(id, INTERRUPTED_TOOL_MESSAGE);
      open.clear();
    }
    if (e.type === 'session.status_idle') {
      for (const m of deferred) userInput(m);
      deferred = [];
    }
  }
  return messages;
}

/**
 * How a Thread's model sees a message from another Thread (ADR 0017): a delegate's report on the
 * coordinator, the coordinator's request on a delegate, the Advisor's answer (documented word for word in
 * docs/api-guide.md "Multi-agent Threads").
 */
export function threadMessageText(body: Record<string, unknown>): string {
  const from = String(body.from_agent_name ?? body.from_session_thread_id ?? 'another agent');
  const text = ((body.content ?? []) as Content)
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('\n');
  return `<message from="${from}">\n${text}\n</message>`;
}

/** The event recording a compaction; its internal fields (never rendered) hold the summary. */
export const COMPACTED = 'agent.thread_context_compacted';

export interface Compaction {
  summary: string;
  /** The last event sequence the summary covers. */
  throughSeq: number;
  /** The compaction event's own sequence. */
  seq: number;
}

export function latestCompaction(events: LogEvent[]): Compaction | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === COMPACTED && typeof e.body._summary === 'string')
      return { summary: e.body._summary, throughSeq: Number(e.body._through_seq), seq: Number(e.seq) };
  }
  return undefined;
}

export const summaryText = (summary: string) =>
  `<conversation_summary>\nThe earlier part of this conversation was compacted into this summary:\n${summary}\n</conversation_summary>`;

/** Characters per token of the text estimate (deliberately low: it over-counts rather than under-counts). */
export const CHARS_PER_TOKEN = 3;

/**
 * The usage-based estimate of the next prompt (tokens): the last measured request after the latest
 * compaction — its prompt (input + cache reads + cache writes) plus its output — plus the text of every
 * event appended since, at {@link CHARS_PER_TOKEN}; undefined when there is no such measurement.
 */
export function estimateFromUsage(events: LogEvent[]): number | undefined {
  const compaction = latestCompaction(events);
  let at = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (compaction && Number(e.seq) < compaction.seq) break;
    if (e.type === 'span.model_request_end' && e.body.model_usage) {
      at = i;
      break;
    }
  }
  if (at < 0) return undefined;
  const usage = events[at]!.body.model_usage as Record<string, number>;
  const measured =
    (usage.input_tokens ?? 0) +
    (usage.cache_read_input_tokens ?? 0) +
    (usage.cache_creation_input_tokens ?? 0) +
    (usage.output_tokens ?? 0);
  let chars = 0;
  for (const e of events.slice(at + 1)) chars += JSON.stringify(e.body).length;
  return measured + Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * Whether the context should be compacted before this turn's first model request, and what to cover:
 * every completed turn, when the next prompt's usage-based estimate reaches `threshold` tokens. Only whole turns are
 * summarized (ending at an idle that left no call open), so no tool_use loses its result.
 */
export function compactionPlan(events: LogEvent[], threshold: number): { throughSeq: number } | undefined {
  let lastEnd: LogEvent | undefined;
  let lastIdle: LogEvent | undefined;
  for (const e of events) {
    if (e.type === 'span.model_request_end' && e.body.model_usage) lastEnd = e;
    if (e.type === 'session.status_idle') lastIdle = e;
  }
  if (!lastEnd || !lastIdle) return undefined;
  if ((estimateFromUsage(events) ?? 0) < threshold) return undefined;
  if ((lastIdle.body.stop_reason as { type?: string } | undefined)?.type === 'requires_action')
    return undefined;
  const throughSeq = Number(lastIdle.seq);
  // The measured prompt must postdate the last compaction, and there must be new turns to cover.
  const previous = latestCompaction(events);
  if (previous && (previous.throughSeq >= throughSeq || Number(lastEnd.seq) < previous.seq)) return undefined;
  return { throughSeq };
}
