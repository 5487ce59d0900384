import { ModelClient, ModelMessage, ModelRequestError } from '@mango/adapter-model';
import { appendEvents } from '@mango/feature-sessions';
import { SessionEntity, SessionEventEntity } from '@mango/persistence';
import type { ModelStepRef, SessionActivities, StepOutcome, TurnRef } from '@mango/workflows';
import { AgentDefinition, CustomTool, enabledSandboxTools, evaluatePermission } from '@mango/domain-agents';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { DataSource, EntityManager } from 'typeorm';

const MAX_TOKENS = 4096;

type Content = Array<{ type: string; text?: string; source?: { data?: string }; title?: string | null }>;

type Block = ModelMessage['content'] extends string | infer B ? B : never;

/**
 * The model transcript from the durable log: user messages (text + inline text documents), replies,
 * tool calls (the agent.tool_use event id is the tool_use id) and their results. A call the policy denied
 * gets an error result so the model learns it was not run.
 */
export function transcript(events: SessionEventEntity[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  const push = (role: 'user' | 'assistant', blocks: Block) => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(...blocks);
    else messages.push({ role, content: [...blocks] });
  };
  for (const e of events) {
    const content = (e.body.content ?? []) as Content;
    switch (e.type) {
      case 'user.message':
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
        break;
      case 'agent.message':
        push(
          'assistant',
          content.filter((b) => b.type === 'text').map((b) => ({ type: 'text' as const, text: b.text! })),
        );
        break;
      case 'agent.tool_use':
        push('assistant', [
          {
            type: 'tool_use',
            id: e.id,
            name: e.body.name as string,
            input: e.body.input as Record<string, unknown>,
          },
        ]);
        if (e.body.evaluated_permission === 'deny') {
          push('user', [
            {
              type: 'tool_result',
              tool_use_id: e.id,
              content: 'Permission to use this tool was denied by policy.',
              is_error: true,
            },
          ]);
        }
        break;
      case 'agent.custom_tool_use':
        push('assistant', [
          {
            type: 'tool_use',
            id: e.id,
            name: e.body.name as string,
            input: e.body.input as Record<string, unknown>,
          },
        ]);
        break;
      case 'user.tool_confirmation':
        if (e.body.result === 'deny') {
          push('user', [
            {
              type: 'tool_result',
              tool_use_id: e.body.tool_use_id as string,
              content: (e.body.deny_message as string | undefined) ?? 'The user denied this tool call.',
              is_error: true,
            },
          ]);
        }
        break;
      case 'user.custom_tool_result':
        push('user', [
          {
            type: 'tool_result',
            tool_use_id: e.body.custom_tool_use_id as string,
            content: content.length ? content.map((b) => ({ type: 'text', text: b.text })) : '(no output)',
            is_error: e.body.is_error === true,
          },
        ]);
        break;
      case 'user.tool_result':
        push('user', [
          {
            type: 'tool_result',
            tool_use_id: e.body.tool_use_id as string,
            content: content.length ? content.map((b) => ({ type: 'text', text: b.text })) : '(no output)',
            is_error: e.body.is_error === true,
          },
        ]);
        break;
    }
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

    async runModelStep({ sessionId, turn, step }: ModelStepRef): Promise<StepOutcome> {
      if (!deps.model)
        throw ApplicationFailure.nonRetryable('no model endpoint is configured (MANGO_MODEL_BASE_URL)');
      const key = `turn:${turn}:step:${step}`;
      const prepared = await withSession(dataSource, sessionId, async (tx, s) => {
        const events = await tx.find(SessionEventEntity, { where: { sessionId }, order: { seq: 'ASC' } });
        // Calls still open come first: the model is asked again only when every call is answered.
        const pending = pendingCalls(events);
        if (pending) return { pending };
        const done = events.find((e) => e.idempotencyKey === `${key}:model_end`);
        const [start] = await appendEvents(
          tx,
          s,
          [
            {
              type: 'span.model_request_start',
              body: {},
              processed: true,
              runnable: false,
              idempotencyKey: `${key}:model_start`,
            },
          ],
          new Date(),
        );
        const startId = start?.id ?? events.find((e) => e.idempotencyKey === `${key}:model_start`)?.id ?? '';
        return {
          agent: s.agent as unknown as AgentDefinition,
          messages: transcript(events),
          events,
          done: Boolean(done),
          startId,
        };
      });
      if (!prepared) return { stopReason: 'end_turn' };
      if ('pending' in prepared) return prepared.pending!;
      if (prepared.done)
        return outcomeOf(prepared.events.filter((e) => e.idempotencyKey?.startsWith(`${key}:tool_use:`)));
      const custom = prepared.agent.tools.filter((t): t is CustomTool => t.type === 'custom');
      const tools = [
        ...enabledSandboxTools(prepared.agent),
        ...custom.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema })),
      ];
      let response;
      const heartbeat = setInterval(() => Context.current().heartbeat(), 2000);
      try {
        response = await deps.model.createMessage({
          model: prepared.agent.model.id,
          max_tokens: MAX_TOKENS,
          ...(prepared.agent.system ? { system: prepared.agent.system } : {}),
          ...(tools.length ? { tools } : {}),
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
      const uses = response.content.filter(
        (b): b is Extract<typeof b, { type: 'tool_use' }> => b.type === 'tool_use',
      );
      const appended = await withSession(dataSource, sessionId, async (tx, s) => {
        const planned = [
          ...(text.length
            ? [
                {
                  type: 'agent.message',
                  body: { content: text },
                  processed: true,
                  runnable: false,
                  idempotencyKey: `${key}:message`,
                },
              ]
            : []),
          ...uses.map((u, i) => ({
            type: custom.some((t) => t.name === u.name) ? 'agent.custom_tool_use' : 'agent.tool_use',
            body: custom.some((t) => t.name === u.name)
              ? { name: u.name, input: u.input }
              : {
                  name: u.name,
                  input: u.input,
                  evaluated_permission: evaluatePermission(s.agent as unknown as AgentDefinition, u.name),
                },
            processed: true,
            runnable: false,
            idempotencyKey: `${key}:tool_use:${i}`,
          })),
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
            idempotencyKey: `${key}:model_end`,
          },
        ];
        const inserted = await appendEvents(tx, s, planned, new Date());
        if (inserted.length) {
          const usage = s.usage as Record<string, number>;
          await tx.update(
            SessionEntity,
            { id: s.id },
            {
              usage: {
                ...usage,
                input_tokens: (usage.input_tokens ?? 0) + response.usage.input_tokens,
                output_tokens: (usage.output_tokens ?? 0) + response.usage.output_tokens,
              },
            },
          );
        }
        return tx.find(SessionEventEntity, { where: { sessionId }, order: { seq: 'ASC' } });
      });
      return outcomeOf((appended ?? []).filter((e) => e.idempotencyKey?.startsWith(`${key}:tool_use:`)));
    },

    async toolResultsReady({ sessionId, toolUseIds }) {
      if (toolUseIds.length === 0) return true;
      const rows: Array<{ n: string }> = await dataSource.query(
        `SELECT count(*) AS n FROM session_events WHERE session_id = $1 AND tool_use_id = ANY($2::text[])`,
        [sessionId, toolUseIds],
      );
      return Number(rows[0]!.n) >= toolUseIds.length;
    },

    async endTurn({ sessionId, turn, stopReason, eventIds }) {
      await withSession(dataSource, sessionId, async (tx, s) => {
        s.status = 'idle';
        await tx.update(SessionEntity, { id: s.id }, { status: 'idle' });
        await appendEvents(
          tx,
          s,
          [
            {
              type: 'session.status_idle',
              body: {
                stop_reason: eventIds?.length
                  ? { type: stopReason, event_ids: eventIds }
                  : { type: stopReason },
              },
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

/** What a model step asks for: sandbox runs for allowed calls, a confirmation for asked ones. */
function outcomeOf(uses: SessionEventEntity[]): StepOutcome {
  const ask = uses
    .filter((u) => u.type === 'agent.custom_tool_use' || u.body.evaluated_permission === 'ask')
    .map((u) => u.id);
  if (ask.length) return { stopReason: 'requires_action', eventIds: ask };
  const run = uses.filter((u) => u.body.evaluated_permission === 'allow').map((u) => u.id);
  if (run.length) return { stopReason: 'tool_use', toolUseIds: run };
  // Only denied calls: their error results are in the transcript; the model answers next step.
  return uses.length ? { stopReason: 'tool_use', toolUseIds: [] } : { stopReason: 'end_turn' };
}

/**
 * Calls still open in the log, in the order that blocks progress: calls needing the client (an `ask`
 * without a confirmation, a custom tool without its result) idle the turn; allowed calls (or confirmed
 * ones) without a result wait for the worker. Denied calls are answered in the transcript.
 */
export function pendingCalls(events: SessionEventEntity[]): StepOutcome | undefined {
  const answered = new Set(events.filter((e) => e.toolUseId).map((e) => e.toolUseId));
  const confirmed = new Map(
    events
      .filter((e) => e.type === 'user.tool_confirmation')
      .map((e) => [e.body.tool_use_id as string, e.body.result as string]),
  );
  const needsAction: string[] = [];
  const waiting: string[] = [];
  for (const e of events) {
    if (e.type === 'agent.custom_tool_use' && !answered.has(e.id)) needsAction.push(e.id);
    if (e.type !== 'agent.tool_use' || answered.has(e.id)) continue;
    const permission = e.body.evaluated_permission;
    if (permission === 'allow') waiting.push(e.id);
    if (permission === 'ask') {
      const verdict = confirmed.get(e.id);
      if (verdict === undefined) needsAction.push(e.id);
      else if (verdict === 'allow') waiting.push(e.id);
    }
  }
  if (needsAction.length) return { stopReason: 'requires_action', eventIds: needsAction };
  if (waiting.length) return { stopReason: 'tool_use', toolUseIds: waiting };
  return undefined;
}
