import type { ModelClient, ModelUsage } from '@mango/adapter-model';
import type { AgentDefinition } from '@mango/domain-agents';
import {
  addUsage,
  COMPACTED,
  compactionPlan,
  compactionThreshold,
  type ModelProfileOverrides,
  profileOf,
  PriceTable,
  SessionUsage,
  threadKeyPrefix,
  threadLog,
  transcript,
} from '@mango/domain-sessions';
import type { SessionLog, SessionLogReader } from '@mango/persistence';
import type { MangoMetrics } from '@mango/platform-metrics';
import { countUsage, internal, SUMMARY_MAX_TOKENS } from './step-events';
import { threadContext } from './thread-context';

/** When to compact: `MANGO_COMPACT_AT_TOKENS` if set, else a share of the model profile's window. */
export interface CompactionSettings {
  compactAtTokens?: number;
  profiles?: ModelProfileOverrides;
}

/** What compaction needs: the log, the model, when to compact, prices and metrics. */
export interface CompactionDeps {
  log: SessionLog;
  model: ModelClient;
  settings: CompactionSettings;
  prices: PriceTable;
  metrics?: MangoMetrics;
}

/** Which transcript to compact: a Session's, at a turn; a delegate Thread's (`threadId`): its own (ADR 0017). */
export interface CompactionAt {
  reader: SessionLogReader;
  sessionId: string;
  turn: number;
  threadId?: string;
}

/**
 * Compaction near the model window (`agent.thread_context_compacted`): before a turn's first request,
 * when the next prompt's usage-based estimate reaches the threshold (80% of the model profile's window,
 * or `MANGO_COMPACT_AT_TOKENS`), the model summarizes every completed turn; the event
 * keeps the summary in internal fields (never rendered) and later transcripts start from it. Idempotent
 * per turn; the summarizing request's usage is counted like any other.
 */
export async function compactIfNeeded(deps: CompactionDeps, at: CompactionAt): Promise<void> {
  const key = `${threadKeyPrefix(at.threadId)}turn:${at.turn}:compacted`;
  const plan = await planCompaction(deps, at, key);
  if (!plan) return;
  const response = await summarize(deps, plan);
  const summary = response.content
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join('\n');
  const recorded = await recordSummary(deps, at, { key, plan, summary, usage: response.usage });
  // The summarizing request's usage is counted like any other.
  if (recorded && deps.metrics) countUsage(deps.metrics, plan.agent.model.id, response.usage, recorded);
}

type CompactionPlan = NonNullable<Awaited<ReturnType<typeof planCompaction>>>;

/** The turns to summarize, read under the row lock; undefined when nothing is due (or it was done). */
async function planCompaction({ log, settings }: CompactionDeps, at: CompactionAt, key: string) {
  return log.withOpenSession(at.sessionId, async (tx, s) => {
    const thread = await threadContext(tx, s, at.threadId);
    if (!thread) return undefined;
    // Read through the transaction's own connection: a second pool connection taken while this one holds
    // the Session's row lock deadlocks the pool once as many steps start at once as it has connections.
    const events = threadLog(await at.reader.read(tx), at.threadId);
    if (events.some((e) => e.idempotencyKey === key)) return undefined;
    const agent: AgentDefinition = thread.agent;
    const profile = profileOf(agent.model.id, settings.profiles);
    const planned = compactionPlan(events, compactionThreshold(profile, settings.compactAtTokens));
    if (!planned) return undefined;
    const covered = events.filter((e) => Number(e.seq) <= planned.throughSeq);
    // The summarizing request runs without thinking, so the covered turns go without their thinking blocks.
    const messages = transcript(covered)
      .map((m) => ({
        ...m,
        content: m.content.filter((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking'),
      }))
      .filter((m) => m.content.length > 0);
    return {
      ...planned,
      messages,
      agent,
      maxTokens: Math.min(SUMMARY_MAX_TOKENS, profile.max_output_tokens),
    };
  });
}

/** The summarizing request (its duration observed like a step's). */
async function summarize({ model, metrics }: CompactionDeps, plan: CompactionPlan) {
  const requested = process.hrtime.bigint();
  const observe = (outcome: 'ok' | 'error') =>
    metrics?.modelRequestDuration.observe(
      { model: plan.agent.model.id, outcome },
      Number(process.hrtime.bigint() - requested) / 1e9,
    );
  return model
    .createMessage({
      model: plan.agent.model.id,
      max_tokens: plan.maxTokens,
      system:
        'You compact conversations between a user and an AI agent. Write a faithful, complete summary of the conversation below that the agent can continue from: the user goals, decisions, facts learned, files and commands involved, tool results that matter, and open tasks. Do not address the user.',
      messages: [
        ...plan.messages,
        {
          role: 'user',
          content: [{ type: 'text', text: 'Summarize the conversation so far for continuation.' }],
        },
      ],
    })
    .then(
      (r) => {
        observe('ok');
        return r;
      },
      (err: unknown) => {
        observe('error');
        throw err;
      },
    );
}

/** The summary recorded once, and its usage added (a delegate's on the Session's and on its own Thread's). */
async function recordSummary(
  { log, prices }: CompactionDeps,
  at: CompactionAt,
  done: { key: string; plan: CompactionPlan; summary: string; usage: ModelUsage },
): Promise<{ before: SessionUsage; after: SessionUsage } | undefined> {
  const { plan, threadId } = { plan: done.plan, threadId: at.threadId };
  let recorded: { before: SessionUsage; after: SessionUsage } | undefined;
  await log.withOpenSession(at.sessionId, async (tx, s) => {
    const thread = await threadContext(tx, s, threadId);
    if (!thread) return;
    const inserted = await log.append(
      tx,
      s,
      [
        {
          ...internal(COMPACTED, { _summary: done.summary, _through_seq: plan.throughSeq }, done.key),
          ...(threadId ? { sessionThreadId: threadId } : {}),
        },
      ],
      new Date(),
    );
    if (inserted.length) {
      const before = s.usage as SessionUsage;
      const add = (u: SessionUsage) => addUsage(plan.agent.model.id, u, done.usage, prices);
      // A delegate's summary counts on the Session's usage (the budget) and on its own Thread's.
      await log.saveUsage(
        tx,
        s,
        add(before),
        thread.primary ? undefined : { id: thread.id, usage: add((thread.usage ?? {}) as SessionUsage) },
      );
      recorded = { before, after: s.usage as SessionUsage };
    }
  });
  return recorded;
}
