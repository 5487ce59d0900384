import { ModelRequestError } from '@mango/adapter-model';
import type { DeclaredMcpTool } from '@mango/domain-mcp';
import {
  CHARS_PER_TOKEN,
  composeModelRequest,
  type ModelProfileOverrides,
  platformTools,
  profileOf,
  requestParameters,
  threadKeyPrefix,
  withContinuation,
} from '@mango/domain-sessions';
import type { SessionLog } from '@mango/persistence';
import type { ModelStepRef } from '@mango/workflows';
import type { McpRuntime } from './mcp.activities';
import { recordFailure, type StepAttempt, type StepRequest } from './model-call';
import { internal } from './step-events';
import type { StartedStep } from './step-prepare';

/** What composing a step's request needs: the log (MCP errors), MCP and the operator's model profiles. */
export interface StepRequestDeps {
  log: SessionLog;
  mcp?: McpRuntime;
  profiles?: ModelProfileOverrides;
}

/**
 * The MCP tools of this turn (listed once per turn): a server that cannot be listed is left out of the
 * turn and reported once per turn as a `session.error` naming it.
 */
export async function declareMcpTools(
  deps: StepRequestDeps,
  at: { ref: ModelStepRef; step: StartedStep; signal: AbortSignal },
): Promise<DeclaredMcpTool[]> {
  const { ref, step } = at;
  if (!deps.mcp || !(step.agent.mcp_servers ?? []).length) return [];
  const { sessionId, threadId, turn } = ref;
  const declared = await deps.mcp.declare(
    threadId ? `${sessionId}/${threadId}` : sessionId,
    turn,
    step.agent,
    step.vaultIds,
    at.signal,
  );
  if (declared.failures.length) {
    const own = threadId ? { sessionThreadId: threadId } : {};
    const errors = declared.failures.map((f) => ({
      ...internal(
        'session.error',
        {
          error: {
            type: f.type,
            message: f.message.slice(0, 1000),
            mcp_server_name: f.server,
            retry_status: { type: 'retrying' },
          },
        },
        `${threadKeyPrefix(threadId)}turn:${turn}:mcp_error:${f.server}`,
      ),
      ...own,
    }));
    await deps.log.withOpenSession(sessionId, (tx, s) => deps.log.append(tx, s, errors, new Date()));
  }
  return declared.tools;
}

/**
 * What the model is sent (docs/api-guide.md "What the model sees" / "What the model is sent"): the
 * composed system prompt and tools (a coordinator's primary Thread also gets the platform tools), and the
 * profile's parameters once the request is admitted. The next prompt, estimated from the last usage plus
 * what was appended since (else from the request text), must leave the profile's window room for
 * output; a request that cannot fit is recorded as a failure that is not retried, and thrown.
 */
export async function composeStepRequest(
  deps: StepRequestDeps,
  at: { attempt: StepAttempt; step: StartedStep; mcpTools: readonly DeclaredMcpTool[] },
): Promise<StepRequest> {
  const { step, attempt } = at;
  const { agent, prompt } = step;
  const { system, tools, betas } = composeModelRequest({
    agent,
    platformTools: platformTools(step.snapshot, attempt.thread.primary),
    skills: prompt.skills,
    memoryStores: prompt.memoryStores,
    mcpTools: at.mcpTools.map((t) => ({
      name: t.modelName,
      description: t.description,
      input_schema: t.input_schema,
    })),
  });
  const profile = profileOf(agent.model.id, deps.profiles);
  const messages = withContinuation(step.messages);
  const estimate =
    step.usageEstimate ?? Math.ceil(JSON.stringify({ system, tools, messages }).length / CHARS_PER_TOKEN);
  const params = requestParameters(profile, agent.model, estimate);
  if ('refused' in params)
    throw await recordFailure(deps.log, {
      attempt,
      err: new ModelRequestError(params.refused, null, false),
      lastAttempt: true,
      tools,
    });
  return { model: agent.model.id, params, ...(system ? { system } : {}), tools, betas, messages };
}
