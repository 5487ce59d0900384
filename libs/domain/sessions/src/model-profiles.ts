/**
 * Model profiles: the one home for per-model facts (docs/operator-guide.md "Model profiles") — the
 * context window, the output tokens one request may ask for, whether and how the model thinks, whether
 * it takes `effort` and `speed`, and its list price. Built-in defaults cover the current Claude models;
 * `MANGO_MODEL_PROFILES` overrides them per exact model id (and `"*"` replaces the default for models
 * no profile knows). Pure: the model step and compaction read them, the price table joins them.
 */
import type { LogEvent } from './tool-calls';
import { CHARS_PER_TOKEN, estimateFromUsage } from './transcript';

/** How a model is asked to think: not at all, with a token budget, or adaptively (the model decides). */
export type ThinkingMode = 'none' | 'enabled' | 'adaptive';

export interface ModelProfile {
  /** Tokens the model sees at most: prompt plus output. */
  context_window: number;
  /** Output tokens one request asks for at most (`max_tokens`), thinking included. */
  max_output_tokens: number;
  thinking: ThinkingMode;
  /** `thinking.budget_tokens` when `thinking` is `enabled` (≥ 1024, below `max_output_tokens`). */
  thinking_budget_tokens: number;
  /** The Agent's `model.effort` is sent (`output_config.effort`). */
  effort: boolean;
  /** The Agent's `model.speed: "fast"` is sent (`speed: "fast"`). */
  speed: boolean;
  /** USD per million tokens; absent: unpriced (no list cost, budgets refuse the model). */
  price?: { input: number; output: number };
}

/**
 * The profile of a model no profile knows (a local gateway, a new id): small on purpose, so that
 * compaction comes early rather than a request the model cannot take; no thinking, effort or speed is
 * sent and the model is unpriced.
 */
export const DEFAULT_MODEL_PROFILE: ModelProfile = Object.freeze({
  context_window: 32_000,
  max_output_tokens: 4_096,
  thinking: 'none',
  thinking_budget_tokens: 1_024,
  effort: false,
  speed: false,
});

const claude = (
  context_window: number,
  max_output_tokens: number,
  thinking: ThinkingMode,
  effort: boolean,
  price: { input: number; output: number } | undefined,
): ModelProfile => ({
  context_window,
  max_output_tokens,
  thinking,
  thinking_budget_tokens: thinking === 'enabled' ? 8_000 : 1_024,
  effort,
  speed: false,
  ...(price ? { price } : {}),
});

/**
 * Built-in profiles by model id prefix (first match wins; dated ids such as `claude-haiku-4-5-20251001`
 * match their family). Windows are the standard ones (a larger beta window needs an operator override).
 * `speed` is off everywhere: fast mode is a research preview behind a beta header on most models, so an
 * operator turns it on per model.
 */
const BUILT_IN: ReadonlyArray<readonly [RegExp, ModelProfile]> = [
  [/^claude-opus-5/, claude(1_000_000, 128_000, 'adaptive', true, undefined)],
  [/^claude-(sonnet|fable)-5/, claude(200_000, 64_000, 'adaptive', true, undefined)],
  [/^claude-opus-4-[78]/, claude(200_000, 128_000, 'adaptive', true, undefined)],
  [/^claude-opus-4-6/, claude(200_000, 128_000, 'adaptive', true, { input: 5, output: 25 })],
  [/^claude-opus-4-5/, claude(200_000, 64_000, 'enabled', true, { input: 5, output: 25 })],
  [/^claude-opus-4/, claude(200_000, 32_000, 'enabled', false, { input: 15, output: 75 })],
  [/^claude-sonnet-4-6/, claude(200_000, 64_000, 'enabled', true, { input: 3, output: 15 })],
  [/^claude-sonnet-4/, claude(200_000, 64_000, 'enabled', false, { input: 3, output: 15 })],
  [/^claude-3-7-sonnet/, claude(200_000, 64_000, 'enabled', false, { input: 3, output: 15 })],
  [/^claude-haiku-4/, claude(200_000, 64_000, 'enabled', false, { input: 1, output: 5 })],
  [/^claude-3-5-haiku/, claude(200_000, 8_192, 'none', false, { input: 0.8, output: 4 })],
];

/** Operator overrides by exact model id (`MANGO_MODEL_PROFILES`); `"*"` replaces the default. */
export type ModelProfileOverrides = Readonly<Record<string, Partial<ModelProfile>>>;

/** The built-in profile of a model, or undefined when none matches. */
export function builtInProfile(model: string): ModelProfile | undefined {
  return BUILT_IN.find(([pattern]) => pattern.test(model))?.[1];
}

/** A model's profile: its operator override over its built-in profile (or the default, or `"*"`). */
export function profileOf(model: string, overrides: ModelProfileOverrides = {}): ModelProfile {
  const own = Object.prototype.hasOwnProperty.call(overrides, model) ? overrides[model] : undefined;
  const base = builtInProfile(model) ?? { ...DEFAULT_MODEL_PROFILE, ...(overrides['*'] ?? {}) };
  return { ...base, ...(own ?? {}) };
}

const KEYS = [
  'context_window',
  'max_output_tokens',
  'thinking',
  'thinking_budget_tokens',
  'effort',
  'speed',
] as const;

/**
 * `MANGO_MODEL_PROFILES`: a JSON object of model id (or `"*"`) → a partial profile with the keys
 * `context_window` (1,024 … 10,000,000), `max_output_tokens` (256 … 1,000,000, below the window),
 * `thinking` (`none` | `enabled` | `adaptive`), `thinking_budget_tokens` (≥ 1,024, below
 * `max_output_tokens`), `effort` and `speed` (booleans). Prices stay in `MANGO_MODEL_PRICES`. Empty or
 * unset is no overrides. Throws one Error naming the first problem (the orchestrator stops at start).
 */
export function parseModelProfiles(raw: string | undefined): ModelProfileOverrides {
  if (raw === undefined || raw.trim() === '') return {};
  const shape =
    'MANGO_MODEL_PROFILES must be a JSON object of model id → {"context_window": n, "max_output_tokens": n, "thinking": "none"|"enabled"|"adaptive", "thinking_budget_tokens": n, "effort": bool, "speed": bool} (every key optional)';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(shape);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(shape);
  const out: Record<string, Partial<ModelProfile>> = {};
  for (const [model, value] of Object.entries(parsed)) {
    const at = `MANGO_MODEL_PROFILES["${model}"]`;
    if (!model) throw new Error('MANGO_MODEL_PROFILES has an empty model id');
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new Error(`${at} must be an object`);
    const v = value as Record<string, unknown>;
    const unknown = Object.keys(v).find((k) => !(KEYS as readonly string[]).includes(k));
    if (unknown) throw new Error(`${at}.${unknown} is not a profile key (${KEYS.join(', ')})`);
    const int = (k: string, min: number, max: number) => {
      if (v[k] === undefined) return;
      const n = v[k];
      if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max)
        throw new Error(`${at}.${k} must be an integer from ${min} to ${max}`);
    };
    int('context_window', 1_024, 10_000_000);
    int('max_output_tokens', 256, 1_000_000);
    int('thinking_budget_tokens', 1_024, 1_000_000);
    if (v.thinking !== undefined && !['none', 'enabled', 'adaptive'].includes(v.thinking as string))
      throw new Error(`${at}.thinking must be "none", "enabled" or "adaptive"`);
    for (const k of ['effort', 'speed'])
      if (v[k] !== undefined && typeof v[k] !== 'boolean')
        throw new Error(`${at}.${k} must be true or false`);
    out[model] = v as Partial<ModelProfile>;
  }
  // The merged profiles must be consistent (an override may rely on its built-in base).
  for (const model of Object.keys(out)) {
    const p = model === '*' ? { ...DEFAULT_MODEL_PROFILE, ...out[model] } : profileOf(model, out);
    const at = `MANGO_MODEL_PROFILES["${model}"]`;
    if (p.max_output_tokens >= p.context_window)
      throw new Error(
        `${at}: max_output_tokens (${p.max_output_tokens}) must be below context_window (${p.context_window})`,
      );
    if (p.thinking === 'enabled' && p.thinking_budget_tokens >= p.max_output_tokens)
      throw new Error(
        `${at}: thinking_budget_tokens (${p.thinking_budget_tokens}) must be below max_output_tokens (${p.max_output_tokens})`,
      );
  }
  return out;
}

/** Compaction starts when the next request's prompt would reach this share of the window. */
export const COMPACT_AT_WINDOW_FRACTION = 0.8;

/** The prompt size (tokens) at which completed turns are compacted: an absolute override, else 80% of the window. */
export function compactionThreshold(profile: ModelProfile, overrideTokens?: number): number {
  return overrideTokens ?? Math.floor(profile.context_window * COMPACT_AT_WINDOW_FRACTION);
}

/** The fewest output tokens a request is sent with; fewer left in the window refuses the request. */
export const MIN_OUTPUT_TOKENS = 1_024;

/** What a model request is sent with, from the profile and the Agent's model settings. */
export interface RequestParameters {
  max_tokens: number;
  thinking?: { type: 'enabled'; budget_tokens: number } | { type: 'adaptive' };
  output_config?: { effort: string };
  speed?: 'fast';
}

/**
 * Request admission: the parameters of the next request, or why it cannot be sent. `max_tokens` is the
 * profile's output limit, lowered to what the window leaves after the estimated prompt; a request with
 * fewer than 1,024 output tokens left (2,048 with a thinking budget) is refused. Thinking, effort and
 * speed are sent only where the profile supports them (docs/api-guide.md "What the model is sent").
 */
export function requestParameters(
  profile: ModelProfile,
  model: { effort?: { type: string }; speed?: string },
  estimatedPromptTokens: number,
): RequestParameters | { refused: string } {
  const left = profile.context_window - estimatedPromptTokens;
  const maxTokens = Math.min(profile.max_output_tokens, left);
  const budgeted = profile.thinking === 'enabled';
  const least = budgeted ? 2 * MIN_OUTPUT_TOKENS : MIN_OUTPUT_TOKENS;
  if (maxTokens < least)
    return {
      refused:
        `the next model request (about ${estimatedPromptTokens} prompt tokens) does not fit the model's ` +
        `${profile.context_window}-token context window, even after compaction`,
    };
  const params: RequestParameters = { max_tokens: maxTokens };
  if (budgeted)
    params.thinking = {
      type: 'enabled',
      budget_tokens: Math.max(
        MIN_OUTPUT_TOKENS,
        Math.min(profile.thinking_budget_tokens, maxTokens - MIN_OUTPUT_TOKENS),
      ),
    };
  else if (profile.thinking === 'adaptive') params.thinking = { type: 'adaptive' };
  if (profile.effort && model.effort) params.output_config = { effort: model.effort.type };
  if (profile.speed && model.speed === 'fast') params.speed = 'fast';
  return params;
}

/** Continuations of a reply cut at `max_tokens` within one turn; the next cut reply ends the turn. */
export const MAX_TOKENS_CONTINUATIONS = 8;

/** The user message that asks for the rest of a reply cut at `max_tokens` (never stored). */
export const CONTINUE_TEXT =
  'Your previous reply was cut off at the output limit. Continue exactly where it stopped.';

/**
 * The messages of a continuation: a transcript that ends with the model's own (cut) reply gets a user
 * message asking for the rest — a prefilled assistant turn is not accepted with thinking on.
 */
export function withContinuation<M extends { role: 'user' | 'assistant'; content: unknown }>(
  messages: M[],
): M[] {
  if (messages.at(-1)?.role !== 'assistant') return messages;
  return [...messages, { role: 'user', content: [{ type: 'text', text: CONTINUE_TEXT }] } as unknown as M];
}

/** The next prompt's estimate: from usage when measured, else from the request's own text. */
export function estimatePromptTokens(events: LogEvent[], request: unknown): number {
  return estimateFromUsage(events) ?? Math.ceil(JSON.stringify(request).length / CHARS_PER_TOKEN);
}
