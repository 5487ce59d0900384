/**
 * Outcomes (openapi.yaml `UserDefineOutcomeEvent`, `OutcomeEvaluation`; docs/api-guide.md "Outcomes"):
 * the rules of `user.define_outcome`, the outcome state machine, what the grader is asked and how its
 * answer is read. Pure and workflow-safe: no I/O, and nothing here imports a module that does.
 *
 *   pending ──(grader starts)──▶ evaluating ──needs_revision──▶ running ──(grader starts)──▶ evaluating …
 *                                   │
 *                                   ├─ satisfied / failed ─────────────────────────▶ (terminal)
 *                                   └─ needs_revision at the last iteration ──▶ max_iterations_reached
 *   pending / running / evaluating ──(interrupt)──▶ interrupted (terminal)
 *
 * `iteration` (0-based) counts grader cycles: iteration n is the n-th grading; `max_iterations` bounds
 * them. A `needs_revision` verdict at iteration `max_iterations - 1` ends the outcome
 * `max_iterations_reached`, after which the agent gets one final revision turn that is not graded.
 */
import {
  idPattern,
  invalidRequest,
  readEnum,
  readInteger,
  readObject,
  readString,
} from '@mango/domain-kernel';

export const OUTCOME_LIMITS = {
  /** Characters of a text rubric (and of a File rubric's text). */
  rubric: 262_144,
  description: 10_000,
  maxIterations: 20,
  defaultIterations: 3,
  /** Characters of the grader's explanation kept on the event and the Session. */
  explanation: 10_000,
} as const;

export type OutcomeRubric = { type: 'text'; content: string } | { type: 'file'; file_id: string };

/** A parsed `user.define_outcome` (a `file` rubric is resolved to its text at admission). */
export interface DefineOutcome {
  type: 'user.define_outcome';
  description: string;
  rubric: OutcomeRubric;
  max_iterations: number;
}

const FILE_ID = idPattern('file');

/** `user.define_outcome` as a client sends it (openapi.yaml `UserDefineOutcomeEventParams`). */
export function parseDefineOutcome(v: unknown, path: string): DefineOutcome {
  const o = readObject(v, path, ['type', 'description', 'rubric', 'max_iterations']);
  const description = readString(o.description, `${path}.description`, {
    min: 1,
    max: OUTCOME_LIMITS.description,
  });
  const r = readObject(o.rubric, `${path}.rubric`);
  const type = readEnum(r.type, `${path}.rubric.type`, ['text', 'file'] as const);
  let rubric: OutcomeRubric;
  if (type === 'text') {
    readObject(o.rubric, `${path}.rubric`, ['type', 'content']);
    rubric = {
      type: 'text',
      content: readString(r.content, `${path}.rubric.content`, { min: 1, max: OUTCOME_LIMITS.rubric }),
    };
  } else {
    readObject(o.rubric, `${path}.rubric`, ['type', 'file_id']);
    const fileId = readString(r.file_id, `${path}.rubric.file_id`);
    if (!FILE_ID.test(fileId)) throw invalidRequest(`${path}.rubric.file_id must be a file_ id`);
    rubric = { type: 'file', file_id: fileId };
  }
  const max_iterations =
    o.max_iterations === undefined || o.max_iterations === null
      ? OUTCOME_LIMITS.defaultIterations
      : readInteger(o.max_iterations, `${path}.max_iterations`, {
          min: 1,
          max: OUTCOME_LIMITS.maxIterations,
        });
  return { type: 'user.define_outcome', description, rubric, max_iterations };
}

/**
 * A File rubric's text as the rubric (the event keeps the text, so deleting the File later changes
 * nothing); too long is a 400 like a text rubric.
 */
export function resolvedFileRubric(path: string, fileId: string, text: string): OutcomeRubric {
  if (text.length === 0) throw invalidRequest(`${path}.rubric: file ${fileId} is empty`);
  if (text.length > OUTCOME_LIMITS.rubric)
    throw invalidRequest(
      `${path}.rubric: file ${fileId} has ${text.length} characters; a rubric may have at most ${OUTCOME_LIMITS.rubric}`,
      { file_id: fileId, reason: 'too_large' },
    );
  return { type: 'text', content: text };
}

// ── The state machine ──────────────────────────────────────────────────────────────────────────────

export const OUTCOME_STATES = [
  'pending',
  'running',
  'evaluating',
  'satisfied',
  'max_iterations_reached',
  'failed',
  'interrupted',
] as const;
export type OutcomeState = (typeof OUTCOME_STATES)[number];

/** What one grading may answer (`span.outcome_evaluation_end.result`, besides `interrupted`). */
export type GraderVerdict = 'satisfied' | 'needs_revision' | 'failed';
export type EvaluationResult = GraderVerdict | 'max_iterations_reached' | 'interrupted';

export const TERMINAL_OUTCOME_STATES: readonly OutcomeState[] = [
  'satisfied',
  'max_iterations_reached',
  'failed',
  'interrupted',
];
export const isTerminalOutcome = (s: OutcomeState) => TERMINAL_OUTCOME_STATES.includes(s);

export type OutcomeInput =
  { type: 'evaluation_start' } | { type: 'evaluation_end'; result: EvaluationResult } | { type: 'interrupt' };

export interface OutcomeProgress {
  state: OutcomeState;
  iteration: number;
  maxIterations: number;
}

/** The next state of an outcome; an input that does not apply in a state is a programming error. */
export function nextOutcome(p: OutcomeProgress, input: OutcomeInput): OutcomeProgress {
  if (isTerminalOutcome(p.state)) throw new Error(`outcome is already ${p.state}`);
  switch (input.type) {
    case 'interrupt':
      return { ...p, state: 'interrupted' };
    case 'evaluation_start':
      if (p.state === 'evaluating') throw new Error('outcome is already evaluating');
      return { ...p, state: 'evaluating' };
    case 'evaluation_end':
      if (input.result === 'interrupted') return { ...p, state: 'interrupted' };
      if (p.state !== 'evaluating') throw new Error(`an evaluation ended while ${p.state}`);
      if (input.result === 'needs_revision') return { ...p, state: 'running', iteration: p.iteration + 1 };
      return { ...p, state: input.result };
  }
}

/**
 * The result of grading `iteration` with `verdict`: a `needs_revision` at the last allowed iteration is
 * `max_iterations_reached` (one final revision turn follows, not graded).
 */
export function evaluationResult(
  verdict: GraderVerdict,
  iteration: number,
  maxIterations: number,
): Exclude<EvaluationResult, 'interrupted'> {
  if (verdict === 'needs_revision' && iteration + 1 >= maxIterations) return 'max_iterations_reached';
  return verdict;
}

/** Whether the agent works again after an evaluation with this result (a revision turn). */
export const revisesAfter = (r: EvaluationResult) => r === 'needs_revision' || r === 'max_iterations_reached';

// ── The Session view (`session.outcome_evaluations`) from the log ────────────────────────────────────

export interface OutcomeLogEvent {
  type: string;
  seq: string | number;
  body: Record<string, unknown>;
  createdAt: Date;
}

/** openapi.yaml `OutcomeEvaluation`. */
export interface OutcomeEvaluation {
  type: 'outcome_evaluation';
  outcome_id: string;
  description: string;
  iteration: number;
  result: OutcomeState;
  explanation: string | null;
  completed_at: string | null;
}

/** The outcome types the view reads (one query on the log). */
export const OUTCOME_EVENT_TYPES = [
  'user.define_outcome',
  'span.outcome_evaluation_start',
  'span.outcome_evaluation_end',
] as const;

/** `session.outcome_evaluations`: one per `user.define_outcome`, in order, folded from its span events. */
export function outcomeEvaluations(events: readonly OutcomeLogEvent[]): OutcomeEvaluation[] {
  const out = new Map<string, OutcomeEvaluation & { max: number }>();
  for (const e of [...events].sort((a, b) => Number(a.seq) - Number(b.seq))) {
    const id = e.body.outcome_id as string;
    if (e.type === 'user.define_outcome') {
      out.set(id, {
        type: 'outcome_evaluation',
        outcome_id: id,
        description: String(e.body.description ?? ''),
        iteration: 0,
        result: 'pending',
        explanation: null,
        completed_at: null,
        max: Number(e.body.max_iterations ?? OUTCOME_LIMITS.defaultIterations),
      });
      continue;
    }
    const o = out.get(id);
    if (!o || isTerminalOutcome(o.result)) continue;
    const progress = { state: o.result, iteration: o.iteration, maxIterations: o.max };
    let next: OutcomeProgress | undefined;
    try {
      if (e.type === 'span.outcome_evaluation_start')
        next = nextOutcome(progress, { type: 'evaluation_start' });
      else if (e.type === 'span.outcome_evaluation_end')
        next = nextOutcome(progress, { type: 'evaluation_end', result: e.body.result as EvaluationResult });
    } catch {
      next = undefined; // an out-of-order span (never written by the orchestrator) changes nothing
    }
    if (!next) continue;
    o.result = next.state;
    o.iteration = next.iteration;
    if (e.type === 'span.outcome_evaluation_end') {
      o.explanation = typeof e.body.explanation === 'string' ? e.body.explanation : null;
      if (isTerminalOutcome(next.state)) {
        o.completed_at = e.createdAt.toISOString();
        // The terminal evaluation keeps its own iteration (the last one graded).
        o.iteration = Number(e.body.iteration ?? o.iteration);
      }
    }
  }
  return [...out.values()].map(({ max: _max, ...v }) => v);
}

/** The outcome still being worked on (not terminal), if any: at most one at a time. */
export function activeOutcome(
  events: readonly OutcomeLogEvent[],
): (OutcomeEvaluation & { maxIterations: number; definedSeq: number; rubric: string }) | undefined {
  const views = outcomeEvaluations(events);
  const open = views.find((v) => !isTerminalOutcome(v.result));
  if (!open) return undefined;
  const defined = events.find(
    (e) => e.type === 'user.define_outcome' && e.body.outcome_id === open.outcome_id,
  )!;
  const rubric = defined.body.rubric as { content?: string } | undefined;
  return {
    ...open,
    maxIterations: Number(defined.body.max_iterations ?? OUTCOME_LIMITS.defaultIterations),
    definedSeq: Number(defined.seq),
    rubric: rubric?.content ?? '',
  };
}

// ── The grader ──────────────────────────────────────────────────────────────────────────────────────

export const GRADER_SYSTEM = [
  'You are a strict grader. You are given the transcript of an agent working on a task, the task',
  'description and a rubric. Judge only from the transcript and the rubric: you cannot run code, run',
  'tests or open files. Answer with exactly one JSON object and nothing else:',
  '{"result": "satisfied" | "needs_revision" | "failed", "explanation": "<why, and what to change>"}',
  '"satisfied": the rubric is met. "needs_revision": it is not met yet and the agent can fix it (say how).',
  '"failed": it cannot be met.',
].join(' ');

/** A transcript message as the grader reads it (the Messages API shapes of `transcript()`). */
export interface GradedMessage {
  role: 'user' | 'assistant';
  /** Transcript blocks; besides these, thinking and web tool blocks may appear (not graded). */
  content: ReadonlyArray<
    | { type: string }
    | { type: 'text'; text: string }
    | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
    | {
        type: 'tool_result';
        tool_use_id: string;
        content: string | Array<{ type: 'text'; text: string }>;
        is_error: boolean;
      }
  >;
}

/** Characters of the transcript the grader sees (the most recent part when longer). */
export const GRADER_TRANSCRIPT_CHARS = 400_000;

/** The transcript as plain text for the grader: who said what, tool calls and their results. */
export function transcriptText(messages: readonly GradedMessage[]): string {
  const lines: string[] = [];
  for (const m of messages)
    for (const block of m.content as ReadonlyArray<{ type: string } & Record<string, any>>) {
      const b = block as any;
      if (b.type === 'text') lines.push(`[${m.role}] ${b.text}`);
      else if (b.type === 'tool_use' || b.type === 'server_tool_use')
        lines.push(`[assistant tool call ${b.name}] ${JSON.stringify(b.input)}`);
      else if (b.type === 'tool_result') {
        const text = typeof b.content === 'string' ? b.content : b.content.map((c: any) => c.text).join('\n');
        lines.push(`[tool result${b.is_error ? ' (error)' : ''}] ${text}`);
      }
      // Thinking blocks (the agent's private reasoning) and web tool result blocks are not graded.
    }
  const all = lines.join('\n');
  return all.length > GRADER_TRANSCRIPT_CHARS ? `…${all.slice(all.length - GRADER_TRANSCRIPT_CHARS)}` : all;
}

/**
 * The grader's model request: its own system text and one user message with the task description, the
 * rubric and the transcript — nothing else (no tools, no files, no sandbox).
 */
export function graderRequest(input: {
  description: string;
  rubric: string;
  messages: readonly GradedMessage[];
  iteration: number;
}): { system: string; messages: Array<{ role: 'user'; content: Array<{ type: 'text'; text: string }> }> } {
  const text = [
    `<task>\n${input.description}\n</task>`,
    `<rubric>\n${input.rubric}\n</rubric>`,
    `<transcript>\n${transcriptText(input.messages)}\n</transcript>`,
    `This is evaluation ${input.iteration + 1}. Answer with the JSON object only.`,
  ].join('\n\n');
  return { system: GRADER_SYSTEM, messages: [{ role: 'user', content: [{ type: 'text', text }] }] };
}

/**
 * The grader's answer, read strictly: one JSON object (optionally inside a single ```json fence) with
 * `result` one of satisfied / needs_revision / failed and a string `explanation`. Anything else is not a
 * verdict: the outcome ends `failed` with an explanation that says the grader's answer was invalid
 * (docs/api-guide.md "Outcomes") — never a crash, never a silent pass.
 */
export function parseGraderAnswer(text: string): { verdict: GraderVerdict; explanation: string } {
  const invalid = (why: string) => ({
    verdict: 'failed' as const,
    explanation: `The grader's answer was not a valid verdict (${why}); the outcome is not evaluated as met.`,
  });
  let body = text.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n```$/.exec(body);
  if (fenced) body = fenced[1]!.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return invalid('not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return invalid('not a JSON object');
  const { result, explanation } = parsed as Record<string, unknown>;
  if (result !== 'satisfied' && result !== 'needs_revision' && result !== 'failed')
    return invalid('result must be satisfied, needs_revision or failed');
  if (typeof explanation !== 'string') return invalid('explanation must be a string');
  return { verdict: result, explanation: explanation.slice(0, OUTCOME_LIMITS.explanation) };
}

/** What the agent reads before a revision turn: the grader's feedback (in the transcript, as user input). */
export function revisionText(result: EvaluationResult, iteration: number, explanation: string): string {
  const last =
    result === 'max_iterations_reached'
      ? ' This was the last evaluation: make your final revision now; it will not be graded again.'
      : '';
  return `<outcome_evaluation iteration="${iteration}" result="${result}">\n${explanation}\n</outcome_evaluation>\nRevise your work to meet the rubric.${last}`;
}

/** What the agent reads for a defined outcome (in the transcript, as user input). */
export function outcomeTaskText(description: string, rubric: string): string {
  return `<outcome>\n<description>\n${description}\n</description>\n<rubric>\n${rubric}\n</rubric>\n</outcome>\nWork on this outcome until the rubric is met; your work will be graded against the rubric.`;
}
