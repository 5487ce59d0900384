import { ModelClient, ModelMessage, ModelRequestError } from '@mango/adapter-model';
import { appendEvents } from '@mango/feature-sessions';
import { SessionEntity, SessionEventEntity } from '@mango/persistence';
import type { SessionActivities, TurnRef } from '@mango/workflows';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { DataSource, EntityManager } from 'typeorm';

const MAX_TOKENS = 4096;

type Content = Array<{ type: string; text?: string; source?: { data?: string }; title?: string | null }>;

/** The model transcript from the durable log: user messages (text + inline text documents) and replies. */
export function transcript(events: SessionEventEntity[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const e of events) {
    let role: 'user' | 'assistant' | undefined;
    let text: string[] = [];
    if (e.type === 'user.message') {
      role = 'user';
      text = (e.body.content as Content).map((b) =>
        b.type === 'text'
          ? b.text!
          : `<document${b.title ? ` title="${b.title}"` : ''}>\n${b.source?.data ?? ''}\n</document>`,
      );
    } else if (e.type === 'agent.message') {
      role = 'assistant';
      text = (e.body.content as Content).filter((b) => b.type === 'text').map((b) => b.text!);
    }
    if (!role || text.length === 0) continue;
    const blocks = text.map((t) => ({ type: 'text' as const, text: t }));
    const last = messages[messages.length - 1];
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  }
  return messages;
}

async function withSession<T>(
  ds: DataSource,
  sessionId: string,
  fn: (tx: EntityManager, s: SessionEntity) => Promise<T>,
): Promise<T | undefined> {
  return ds.transaction(async (tx) => {
    const s = await tx.findOne(SessionEntity, {
      where: { id: sessionId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!s || s.deletedAt) return undefined; // a deleted Session: nothing more to record
    return fn(tx, s);
  });
}

/**
 * Activities of the Session workflow. Every event they append carries a deterministic idempotency key
 * (`turn:<n>:<step>`), so a retried activity after a crash appends nothing twice.
 */
export function createSessionActivities(deps: {
  dataSource: DataSource;
  model: ModelClient | null;
}): SessionActivities {
  const { dataSource } = deps;
  return {
    async beginTurn({ sessionId, turn }: TurnRef) {
      await withSession(dataSource, sessionId, async (tx, s) => {
        s.status = 'running';
        await tx.update(SessionEntity, { id: s.id }, { status: 'running' });
        await appendEvents(
          tx,
          s,
          [
            {
              type: 'session.status_running',
              body: {},
              processed: true,
              runnable: false,
              idempotencyKey: `turn:${turn}:running`,
            },
          ],
          new Date(),
        );
      });
    },

    async runModelTurn({ sessionId, turn }: TurnRef) {
      if (!deps.model)
        throw ApplicationFailure.nonRetryable('no model endpoint is configured (MANGO_MODEL_BASE_URL)');
      const prepared = await withSession(dataSource, sessionId, async (tx, s) => {
        const events = await tx.find(SessionEventEntity, { where: { sessionId }, order: { seq: 'ASC' } });
        const done = events.find((e) => e.idempotencyKey === `turn:${turn}:message`);
        const [start] = await appendEvents(
          tx,
          s,
          [
            {
              type: 'span.model_request_start',
              body: {},
              processed: true,
              runnable: false,
              idempotencyKey: `turn:${turn}:model_start`,
            },
          ],
          new Date(),
        );
        const startId =
          start?.id ?? events.find((e) => e.idempotencyKey === `turn:${turn}:model_start`)?.id ?? '';
        return {
          agent: s.agent as { model: { id: string }; system: string | null },
          messages: transcript(events),
          done: Boolean(done),
          startId,
        };
      });
      if (!prepared || prepared.done) return { stopReason: 'end_turn' as const };
      let response;
      const heartbeat = setInterval(() => Context.current().heartbeat(), 2000);
      try {
        response = await deps.model.createMessage({
          model: prepared.agent.model.id,
          max_tokens: MAX_TOKENS,
          ...(prepared.agent.system ? { system: prepared.agent.system } : {}),
          messages: prepared.messages,
        });
      } catch (err) {
        if (err instanceof ModelRequestError && !err.retryable)
          throw ApplicationFailure.nonRetryable(err.message);
        throw err;
      } finally {
        clearInterval(heartbeat);
      }
      const text = response.content
        .filter((b) => b.type === 'text')
        .map((b) => ({ type: 'text', text: (b as { text: string }).text }));
      await withSession(dataSource, sessionId, async (tx, s) => {
        const now = new Date();
        const inserted = await appendEvents(
          tx,
          s,
          [
            {
              type: 'agent.message',
              body: { content: text },
              processed: true,
              runnable: false,
              idempotencyKey: `turn:${turn}:message`,
            },
            {
              type: 'span.model_request_end',
              body: {
                model_request_start_id: prepared.startId,
                is_error: false,
                model_usage: {
                  input_tokens: response.usage.input_tokens,
                  output_tokens: response.usage.output_tokens,
                  cache_creation_input_tokens: response.usage.cache_creation_input_tokens ?? 0,
                  cache_read_input_tokens: response.usage.cache_read_input_tokens ?? 0,
                },
              },
              processed: true,
              runnable: false,
              idempotencyKey: `turn:${turn}:model_end`,
            },
          ],
          now,
        );
        if (inserted.length) {
          const usage = s.usage as Record<string, number>;
          const next = {
            ...usage,
            input_tokens: (usage.input_tokens ?? 0) + response.usage.input_tokens,
            output_tokens: (usage.output_tokens ?? 0) + response.usage.output_tokens,
          };
          await tx.update(SessionEntity, { id: s.id }, { usage: next });
        }
      });
      return { stopReason: 'end_turn' as const };
    },

    async endTurn({ sessionId, turn, stopReason }) {
      await withSession(dataSource, sessionId, async (tx, s) => {
        s.status = 'idle';
        await tx.update(SessionEntity, { id: s.id }, { status: 'idle' });
        await appendEvents(
          tx,
          s,
          [
            {
              type: 'session.status_idle',
              body: { stop_reason: { type: stopReason } },
              processed: true,
              runnable: false,
              idempotencyKey: `turn:${turn}:idle`,
            },
          ],
          new Date(),
        );
      });
    },
  };
}
