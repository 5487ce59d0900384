import type { ModelClient, ModelContentBlock, ModelUsage } from '@mango/adapter-model';
import {
  AgentDefinition,
  AUTO_JUDGE_LIMITS,
  AUTO_JUDGE_SYSTEM,
  AutoCall,
  AutoEvaluation,
  autoJudgeMessage,
  failedAutoJudgement,
  isAutoPolicy,
  parseAutoJudgement,
} from '@mango/domain-agents';
import type { DeclaredMcpTool } from '@mango/domain-mcp';

/**
 * The `auto` calls among one reply's tool uses, judged: index in `uses` → evaluation, and the tokens the
 * judgements used (null when none answered). Sandbox calls whose toolset policy is `auto` and MCP calls
 * whose tool is `auto`; custom tools have no policy.
 */
export async function autoEvaluations(
  model: ModelClient,
  reply: {
    agent: AgentDefinition;
    uses: ReadonlyArray<Pick<Extract<ModelContentBlock, { type: 'tool_use' }>, 'name' | 'input'>>;
    /** Calls that have no policy: custom tools, and calls answered within the step. */
    unjudged: (name: string) => boolean;
    mcpTools: readonly DeclaredMcpTool[];
  },
  settings: AutoJudgeSettings,
  signal: AbortSignal,
): Promise<{ evaluations: Map<number, AutoEvaluation>; usage: ModelUsage | null }> {
  const { agent, uses, mcpTools } = reply;
  const picked: Array<{ index: number; call: AutoCall }> = [];
  uses.forEach((u, index) => {
    if (reply.unjudged(u.name)) return;
    const mcp = mcpTools.find((t) => t.modelName === u.name);
    if (mcp) {
      if (mcp.auto)
        picked.push({
          index,
          call: { kind: 'mcp', name: mcp.toolName, mcpServerName: mcp.serverName, input: u.input },
        });
    } else if (isAutoPolicy(agent, u.name))
      picked.push({ index, call: { kind: 'sandbox', name: u.name, input: u.input } });
  });
  if (!picked.length) return { evaluations: new Map(), usage: null };
  const judged = await judgeAutoCalls(model, { agent, calls: picked.map((p) => p.call) }, settings, signal);
  const used = judged.flatMap((j) => (j.usage ? [j.usage] : []));
  return {
    evaluations: new Map(picked.map((p, i) => [p.index, judged[i]!.evaluation])),
    usage: used.length
      ? {
          input_tokens: used.reduce((n, u) => n + u.input_tokens, 0),
          output_tokens: used.reduce((n, u) => n + u.output_tokens, 0),
        }
      : null,
  };
}

/** How the `auto` judgement is bounded (MANGO_AUTO_PERMISSION_TIMEOUT_MS shortens or lengthens the timeout). */
export interface AutoJudgeSettings {
  timeoutMs?: number;
  maxTokens?: number;
}

/**
 * Judges the `auto` calls of one model reply (docs/api-guide.md "The auto permission policy"): one bounded
 * request per call, in parallel, each with the fixed system prompt, the Agent's instructions and the call
 * as its only message, no tools, a short timeout and a small `max_tokens`, on the Agent's model. A failed,
 * slow or unparsable judgement is `ask`, never a deny. Runs inside the model step, before its events are
 * appended; the decision and its reason go on the call's event, so a retried step that recorded its
 * events never judges again (its events are found by key). Each answered judgement reports its tokens:
 * the model step adds them to the Session's usage (and so to its list cost and budget) with the reply's.
 */
export async function judgeAutoCalls(
  model: ModelClient,
  { agent, calls }: { agent: { model: { id: string }; system?: string | null }; calls: AutoCall[] },
  settings: AutoJudgeSettings,
  signal: AbortSignal,
): Promise<Array<{ evaluation: AutoEvaluation; usage?: ModelUsage }>> {
  const timeoutMs = settings.timeoutMs ?? AUTO_JUDGE_LIMITS.timeoutMs;
  return Promise.all(
    calls.map(async (call) => {
      const bounded = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
      try {
        const reply = await model.createMessage(
          {
            model: agent.model.id,
            max_tokens: settings.maxTokens ?? AUTO_JUDGE_LIMITS.maxTokens,
            system: AUTO_JUDGE_SYSTEM,
            messages: [{ role: 'user', content: autoJudgeMessage(agent.system, call) }],
          },
          { signal: bounded },
        );
        const text = reply.content
          .filter((b) => b.type === 'text')
          .map((b) => (b as { text: string }).text)
          .join('');
        return { evaluation: parseAutoJudgement(text), usage: reply.usage };
      } catch (err) {
        // An interrupt during the judgement: the reply's events are still recorded (the calls as ask), and
        // the interrupt then closes them like any open call.
        if (signal.aborted)
          return { evaluation: failedAutoJudgement('the turn was interrupted during the judgement') };
        return {
          evaluation: failedAutoJudgement(
            bounded.aborted
              ? `the judgement did not finish within ${timeoutMs} ms`
              : `the judgement request failed: ${(err as Error).message ?? String(err)}`,
          ),
        };
      }
    }),
  );
}
