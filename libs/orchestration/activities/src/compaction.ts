import type { ModelClient } from '@mango/adapter-model';
import type { AgentDefinition } from '@mango/domain-agents';
import {
  addUsage,
  COMPACTED,
  compactionPlan,
  PriceTable,
  SessionUsage,
  transcript,
} from '@mango/domain-sessions';
import type { SessionLog, SessionLogReader } from '@mango/persistence';
import type { MangoMetrics } from '@mango/platform-metrics';
import { countUsage, internal, MAX_TOKENS } from './step-events';

/**
 * Compaction near the model window (`agent.thread_context_compacted`): before a turn's first request,
 * when the previous prompt reached the threshold, the model summarizes every completed turn; the event
 * keeps the summary in internal fields (never rendered) and later transcripts start from it. Idempotent
 * per turn; the summarizing request's usage is counted like any other.
 */
export async function compactIfNeeded(
  log: SessionLog,
  reader: SessionLogReader,
  model: ModelClient,
  sessionId: string,
  turn: number,
  threshold: number,
  prices: PriceTable,
  metrics?: MangoMetrics,
): Promise<void> {
  const key = `turn:${turn}:compacted`;
  const plan = await log.withOpenSession(sessionId, async (tx, s) => {
    // Read through the transaction's own connection: a second pool connection taken while this one holds
    // the Session's row lock deadlocks the pool once as many steps start at once as it has connections.
    const events = await reader.read(tx);
    if (events.some((e) => e.idempotencyKey === key)) return undefined;
    const planned = compactionPlan(events, threshold);
    if (!planned) return undefined;
    const covered = events.filter((e) => Number(e.seq) <= planned.throughSeq);
    return { ...planned, messages: transcript(covered), agent: s.agent as unknown as AgentDefinition };
  });
  if (!plan) return;
  const requested = process.hrtime.bigint();
  const observe = (outcome: 'ok' | 'error') =>
    metrics?.modelRequestDuration.observe(
      { model: plan.agent.model.id, outcome },
      Number(process.hrtime.bigint() - requested) / 1e9,
    );
  const response = await model
    .createMessage({
      model: plan.agent.model.id,
      max_tokens: MAX_TOKENS,
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
  const summary = response.content
    .filter((b) => b.type === 'text')
    .map((b) => (b as { text: string }).text)
    .join('\n');
  let recorded: { before: SessionUsage; after: SessionUsage } | undefined;
  await log.withOpenSession(sessionId, async (tx, s) => {
    const inserted = await log.append(
      tx,
      s,
      [internal(COMPACTED, { _summary: summary, _through_seq: plan.throughSeq }, key)],
      new Date(),
    );
    if (inserted.length) {
      const before = s.usage as SessionUsage;
      await log.saveUsage(tx, s, addUsage(plan.agent.model.id, before, response.usage, prices));
      recorded = { before, after: s.usage as SessionUsage };
    }
  });
  // The summarizing request's usage is counted like any other.
  if (recorded && metrics) countUsage(metrics, plan.agent.model.id, response.usage, recorded);
}
