import type { ModelContentBlock, ModelRequestError } from '@mango/adapter-model';
import {
  activationResult,
  type ActivationResult,
  type ServerToolDeclaration,
  type ToolDeclaration,
} from '@mango/domain-sessions';
import { type FrozenSkill, SkillVersionFileEntity } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import type { EntityManager } from 'typeorm';
import { internal, type StoredEvent } from './step-events';

/**
 * The I/O around the pure request composition (libs/domain/sessions `composeModelRequest`): Skill
 * activations answered from Mango's kept copy, and the web tools' blocks recorded as events. What the
 * Session has — its frozen Skills and attached Memory Stores — comes from `SessionRepository.promptInputs`
 * (frozen on the Session at create, libs/persistence/src/prompt-inputs.ts).
 */

/** The answer to one `activate_skill` call, from the kept copy of the named Skill's version. */
export async function answerActivation(
  tx: EntityManager,
  skills: readonly FrozenSkill[],
  input: Record<string, unknown>,
): Promise<ActivationResult> {
  const skill = skills.find((s) => s.name === input.name);
  const files = skill
    ? await tx.find(SkillVersionFileEntity, {
        where: { skillId: skill.skillId, version: skill.version },
        order: { path: 'ASC' },
      })
    : [];
  return activationResult(
    input,
    skills.map((s) => ({
      name: s.name,
      skillPath: s.path,
      allPaths: s === skill ? files.map((f) => f.path) : [],
      texts:
        s === skill
          ? files.flatMap((f) => (f.content === null ? [] : [{ path: f.path, content: f.content }]))
          : [],
    })),
  );
}

type Block = Record<string, unknown> & { type: string };

/** What a web tool result shows on its `agent.tool_result` event: one text block per result. */
function resultSummary(block: Block): { content: Array<{ type: 'text'; text: string }>; isError: boolean } {
  const c = block.content as unknown;
  if (Array.isArray(c)) {
    const lines = c
      .filter((r): r is Block => typeof r === 'object' && r !== null)
      .map((r) => ({ type: 'text' as const, text: [r.title, r.url].filter(Boolean).join('\n') }));
    return { content: lines.length ? lines : [{ type: 'text', text: '(no results)' }], isError: false };
  }
  const r = (c ?? {}) as Block;
  if (typeof r.error_code === 'string')
    return { content: [{ type: 'text', text: `error: ${r.error_code}` }], isError: true };
  const doc = (r.content ?? {}) as { title?: string | null };
  return {
    content: [{ type: 'text', text: [doc.title, r.url].filter(Boolean).join('\n') || '(no content)' }],
    isError: false,
  };
}

const isServerResult = (b: Block) =>
  (b.type === 'web_search_tool_result' || b.type === 'web_fetch_tool_result') &&
  typeof b.tool_use_id === 'string';

/**
 * The web tool calls the endpoint ran in this response, as events with the hosted shapes: an
 * `agent.tool_use` (name, input, `evaluated_permission: allow`) per `server_tool_use` block and an
 * `agent.tool_result` (its `tool_use_id`, text summary, `is_error`) per result block. The blocks
 * themselves stay in internal fields, so the transcript sends them back exactly as they came.
 */
export function serverToolEvents(content: readonly ModelContentBlock[], key: string): StoredEvent[] {
  const ids = new Map<string, string>();
  const out: StoredEvent[] = [];
  for (const [i, raw] of content.entries()) {
    const b = raw as unknown as Block;
    if (b.type === 'server_tool_use' && typeof b.id === 'string') {
      const id = newId('sessionEvent');
      ids.set(b.id, id);
      out.push({
        ...internal(
          'agent.tool_use',
          { name: b.name, input: b.input ?? {}, evaluated_permission: 'allow', _server_tool_use_id: b.id },
          `${key}:server_tool_use:${i}`,
        ),
        id,
      });
    } else if (isServerResult(b)) {
      const summary = resultSummary(b);
      out.push(
        internal(
          'agent.tool_result',
          {
            tool_use_id: ids.get(b.tool_use_id as string) ?? b.tool_use_id,
            content: summary.content,
            is_error: summary.isError,
            _server_block: b,
          },
          `${key}:server_tool_result:${i}`,
        ),
      );
    }
  }
  return out;
}

const isServerTool = (t: ToolDeclaration): t is ServerToolDeclaration => 'type' in t;

/**
 * The `session.error` message of a failed request: a 400 from a request that declared web tools says
 * that the endpoint may not support them and how to turn them off.
 */
export function failureMessage(err: ModelRequestError, tools: readonly ToolDeclaration[]): string {
  const base = err.status ? `The model endpoint answered ${err.status}` : err.message.slice(0, 300);
  const web = tools.filter(isServerTool).map((t) => t.name);
  if (err.status !== 400 || web.length === 0) return base;
  return (
    `${base}. The request declared ${web.join(' and ')} as server tools (type ${tools
      .filter(isServerTool)
      .map((t) => t.type)
      .join(', ')}); an endpoint without them rejects it: use an endpoint that runs them, or disable ` +
    `them on the Agent (agent_toolset_20260401 configs: {name: "${web[0]}", enabled: false}).`
  );
}
