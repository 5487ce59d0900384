/**
 * The multi-agent orchestration's pure rules (ADR 0017 "Orchestration"): which roster members a
 * coordinator can reach, the platform tools it is given (`list_agents`, `send_to_agent`,
 * `consult_advisor`) and how a call to one is decided, what Agent a Thread runs, how a Thread's own log
 * is read out of the Session's one log, and the idempotency keys and workflow ids of a Thread. Pure and
 * workflow-safe: the workflow bundle imports this module (only types from elsewhere).
 */
import type { AgentDefinition } from '@mango/domain-agents';
import { closesOpenCalls } from './tool-calls';

/** At most this many delegate Threads run at once in a Session (Advisor Threads are exempt). */
export const MAX_RUNNING_THREADS = 25;

/** The `agent_ref` of an Advisor Thread (`session_threads.agent_ref`). */
export const ADVISOR_REF = 'advisor';
/** The agent name of an Advisor Thread (hosted: `anthropic.advisor`). */
export const ADVISOR_AGENT_NAME = 'advisor';

export const LIST_AGENTS_TOOL = 'list_agents';
export const SEND_TO_AGENT_TOOL = 'send_to_agent';
export const CONSULT_ADVISOR_TOOL = 'consult_advisor';

/** Longest message a coordinator may send to a delegate or the Advisor in one call. */
export const MAX_THREAD_MESSAGE_CHARS = 100_000;

/** The Advisor's system prompt (documented word for word in docs/api-guide.md "Multi-agent Threads"). */
export const ADVISOR_SYSTEM =
  'You are an advisor consulted by another agent. Answer its question directly and concisely from what ' +
  'it tells you. You have no tools and cannot see its files.';

/** A frozen roster entry as the Session snapshot holds it (`agent.multiagent.agents[i]`). */
export type FrozenRosterEntry =
  | ({ type: 'agent'; id?: string } & Partial<AgentDefinition>)
  | { type: 'advisor'; model: string }
  | { type: string; [k: string]: unknown };

/** The part of a Session's frozen Agent the orchestration reads. */
export interface CoordinatorSnapshot {
  name?: string;
  tools?: AgentDefinition['tools'];
  multiagent?: { agents?: readonly FrozenRosterEntry[] } | null;
}

/** A roster Agent a coordinator can send work to. */
export interface RosterMember {
  /** The roster index (`session_threads.agent_ref`). */
  ref: string;
  /** Unique within the roster: a repeated Agent name gets ` (2)`, ` (3)` … in roster order. */
  name: string;
  description: string | null;
}

/** The delegates of a coordinator's frozen roster (every entry but the Advisor), in roster order. */
export function rosterMembers(agent: CoordinatorSnapshot): RosterMember[] {
  const seen = new Map<string, number>();
  const members: RosterMember[] = [];
  for (const [i, entry] of (agent.multiagent?.agents ?? []).entries()) {
    if (entry.type === 'advisor') continue;
    const base = String((entry as { name?: unknown }).name ?? `agent ${i}`);
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const description = (entry as { description?: unknown }).description;
    members.push({
      ref: String(i),
      name: n === 1 ? base : `${base} (${n})`,
      description: typeof description === 'string' ? description : null,
    });
  }
  return members;
}

/** The Advisor entry's model, when the roster has one. */
export function advisorModel(agent: CoordinatorSnapshot): string | undefined {
  const entry = (agent.multiagent?.agents ?? []).find((a) => a.type === 'advisor') as
    { model?: unknown } | undefined;
  return typeof entry?.model === 'string' ? entry.model : undefined;
}

/** The definition a Thread runs: a roster entry's frozen Agent, or the Advisor's (no tools), or undefined. */
export function threadAgent(agent: CoordinatorSnapshot, agentRef: string): AgentDefinition | undefined {
  if (agentRef === ADVISOR_REF) {
    const model = advisorModel(agent);
    if (!model) return undefined;
    return {
      name: ADVISOR_AGENT_NAME,
      description: null,
      system: ADVISOR_SYSTEM,
      model: { id: model },
      tools: [],
      mcp_servers: [],
      skills: [],
      multiagent: null,
      metadata: {},
    };
  }
  const entry = agent.multiagent?.agents?.[Number(agentRef)];
  if (!entry || entry.type !== 'agent') return undefined;
  const e = entry as Partial<AgentDefinition>;
  return {
    name: e.name ?? `agent ${agentRef}`,
    description: e.description ?? null,
    system: e.system ?? null,
    model: e.model!,
    tools: e.tools ?? [],
    mcp_servers: e.mcp_servers ?? [],
    skills: e.skills ?? [],
    // A delegate has no roster of its own (depth 1): it is given no platform tools.
    multiagent: null,
    metadata: {},
  };
}

/** The name a Thread's events carry (`agent_name`): its roster member's, or the Advisor's. */
export function threadAgentName(agent: CoordinatorSnapshot, agentRef: string | null): string {
  if (agentRef === null) return agent.name ?? 'agent';
  if (agentRef === ADVISOR_REF) return ADVISOR_AGENT_NAME;
  return rosterMembers(agent).find((m) => m.ref === agentRef)?.name ?? `agent ${agentRef}`;
}

/** A platform tool as the model request declares it. */
export interface PlatformToolDeclaration {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

function customNames(agent: CoordinatorSnapshot): Set<string> {
  return new Set((agent.tools ?? []).flatMap((t) => (t.type === 'custom' ? [t.name] : [])));
}

/**
 * The platform tools of a Thread's model request: only the primary Thread of a coordinator (a Session
 * whose Agent has a `multiagent` roster) gets them; a custom tool of the same name wins.
 */
export function platformTools(agent: CoordinatorSnapshot, primary: boolean): PlatformToolDeclaration[] {
  if (!primary || !agent.multiagent) return [];
  const members = rosterMembers(agent);
  const taken = customNames(agent);
  const tools: PlatformToolDeclaration[] = [];
  if (members.length) {
    tools.push({
      name: LIST_AGENTS_TOOL,
      description:
        'List the agents you can delegate work to with send_to_agent: their names and descriptions.',
      input_schema: { type: 'object', properties: {}, additionalProperties: false },
    });
    tools.push({
      name: SEND_TO_AGENT_TOOL,
      description:
        'Send a message to one of your agents. Each agent works in its own thread, sharing your ' +
        'sandbox files; a later message to the same agent continues its thread. The call returns at ' +
        'once; the agent reports back with a message when it has finished.',
      input_schema: {
        type: 'object',
        properties: {
          agent: { type: 'string', enum: members.map((m) => m.name), description: 'The agent to send to.' },
          message: { type: 'string', description: 'What the agent should do, with everything it needs.' },
        },
        required: ['agent', 'message'],
        additionalProperties: false,
      },
    });
  }
  if (advisorModel(agent))
    tools.push({
      name: CONSULT_ADVISOR_TOOL,
      description:
        'Ask the advisor a question. It sees only your question (no files, no tools); its answer ' +
        'arrives as a message.',
      input_schema: {
        type: 'object',
        properties: { question: { type: 'string', description: 'The question, with the context it needs.' } },
        required: ['question'],
        additionalProperties: false,
      },
    });
  return tools.filter((t) => !taken.has(t.name));
}

/** Whether a call by this name is a platform tool the model step answers itself. */
export function isPlatformCall(name: string, agent: CoordinatorSnapshot, primary: boolean): boolean {
  return platformTools(agent, primary).some((t) => t.name === name);
}

/** What a platform tool call asks for, decided before anything is written. */
export type PlatformCall =
  | { kind: 'list'; text: string }
  | { kind: 'send'; member: RosterMember; message: string }
  | { kind: 'advise'; question: string }
  | { kind: 'error'; text: string };

/** Decides a platform tool call from its name and input (the model may send anything). */
export function decidePlatformCall(
  name: string,
  input: Record<string, unknown>,
  agent: CoordinatorSnapshot,
): PlatformCall {
  const members = rosterMembers(agent);
  if (name === LIST_AGENTS_TOOL)
    return {
      kind: 'list',
      text: JSON.stringify({
        agents: members.map((m) => ({ name: m.name, description: m.description })),
      }),
    };
  const text = (field: string) => {
    const v = input[field];
    if (typeof v !== 'string' || v.trim().length === 0)
      return { error: `${field} must be a non-empty string` };
    if (v.length > MAX_THREAD_MESSAGE_CHARS)
      return { error: `${field} is longer than ${MAX_THREAD_MESSAGE_CHARS} characters` };
    return { value: v };
  };
  if (name === SEND_TO_AGENT_TOOL) {
    const member = members.find((m) => m.name === input.agent);
    if (!member)
      return {
        kind: 'error',
        text: `unknown agent ${JSON.stringify(input.agent)}; the agents are: ${members.map((m) => m.name).join(', ')}`,
      };
    const message = text('message');
    if ('error' in message) return { kind: 'error', text: message.error! };
    return { kind: 'send', member, message: message.value! };
  }
  if (name === CONSULT_ADVISOR_TOOL) {
    const question = text('question');
    if ('error' in question) return { kind: 'error', text: question.error! };
    return { kind: 'advise', question: question.value! };
  }
  return { kind: 'error', text: `${name} is not a platform tool` };
}

/** The idempotency-key prefix of a Thread's own events: none for the primary, `thread:<id>:` for a child. */
export function threadKeyPrefix(threadId?: string | null): string {
  return threadId ? `thread:${threadId}:` : '';
}

/** The Temporal workflow id of a child Thread (the primary's is the Session id). */
export function threadWorkflowId(sessionId: string, threadId: string): string {
  return `thread-${sessionId}-${threadId}`;
}

/** A child Thread's status events under the names the turn logic reads (the primary's own). */
const CHILD_STATUS_AS_SESSION: Record<string, string> = {
  'session.thread_status_running': 'session.status_running',
  'session.thread_status_idle': 'session.status_idle',
  'session.thread_status_rescheduled': 'session.status_rescheduled',
};

/** A delegate's own event type as the turn logic reads it (its `session.thread_status_*` as `session.status_*`). */
export function asOwnType(type: string): string {
  return CHILD_STATUS_AS_SESSION[type] ?? type;
}

/** What {@link threadLog} reads of an event. */
export interface ThreadLogEvent {
  type: string;
  sessionThreadId?: string | null;
}

/**
 * One Thread's log out of the Session's (ADR 0017): the primary's events are those without a
 * `session_thread_id`; a child's are its own plus the Session-wide interrupts (`user.interrupt` without a
 * Thread), with its `session.thread_status_*` read as `session.status_*` so the transcript, the open-call
 * rules and the resume fold treat every Thread alike.
 */
export function threadLog<E extends ThreadLogEvent>(events: readonly E[], threadId?: string | null): E[] {
  if (!threadId) return events.filter((e) => (e.sessionThreadId ?? null) === null);
  const out: E[] = [];
  for (const e of events) {
    const owner = e.sessionThreadId ?? null;
    if (owner === threadId) out.push(CHILD_STATUS_AS_SESSION[e.type] ? { ...e, type: asOwnType(e.type) } : e);
    else if (owner === null && e.type === 'user.interrupt') out.push(e);
  }
  return out;
}

/**
 * Whose open calls an event closes, read the way {@link threadLog} splits the log: a Session-wide
 * `user.interrupt` closes every Thread's; any other closing event (`closesOpenCalls` on its own type) only
 * its own Thread's (`null`: the primary), so a coordinator's finished turn leaves its delegates' calls
 * running. For readers of the whole Session log, such as the worker's runner.
 */
export function callsClosedBy(e: {
  type: string;
  sessionThreadId?: string | null;
  body: Record<string, unknown>;
}): { every: true } | { threadId: string | null } | undefined {
  const threadId = e.sessionThreadId ?? null;
  if (!closesOpenCalls({ type: asOwnType(e.type), body: e.body })) return undefined;
  if (e.type === 'user.interrupt' && threadId === null) return { every: true };
  return { threadId };
}

/** A resume-fold event of a child Thread with its key's `thread:<id>:` prefix removed (see threadLog). */
export function unprefixedKey(key: string | null | undefined, threadId?: string | null): string | null {
  if (!key) return null;
  const prefix = threadKeyPrefix(threadId);
  if (!prefix) return key;
  return key.startsWith(prefix) ? key.slice(prefix.length) : null;
}

/** The text of a Thread's last reply in a turn (its report), or undefined when it wrote none. */
export function lastReplyText(
  events: ReadonlyArray<{ type: string; body: Record<string, unknown> }>,
): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type !== 'agent.message') continue;
    const text = ((e.body.content ?? []) as Array<{ type: string; text?: string }>)
      .filter((b) => b.type === 'text' && b.text)
      .map((b) => b.text)
      .join('\n');
    if (text) return text;
  }
  return undefined;
}
