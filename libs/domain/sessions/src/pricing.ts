import { builtInProfile } from './model-profiles';
import type { Budget } from './session-input';

/**
 * List prices of the models Mango knows, used for `usage.list_cost` and budgets (openapi.yaml `SessionUsage`, `Budget`; docs/api-guide.md "Sessions — choices").
 * Prices are USD per million tokens; cache writes cost 1.25× input and cache reads 0.1× input, as on the
 * public price list. The built-in prices live in the model profiles (`model-profiles.ts`, one home for
 * per-model facts). A model without a price is "unpriced": its usage has no list cost and a budgeted
 * Session cannot use it.
 */
export interface ModelPrice {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
}

/** Operator prices by exact model id (`MANGO_MODEL_PRICES`); they win over the built-in list. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

export function priceOf(model: string, table: PriceTable = {}): ModelPrice | undefined {
  if (Object.prototype.hasOwnProperty.call(table, model)) return table[model];
  return builtInProfile(model)?.price;
}

/**
 * `MANGO_MODEL_PRICES`: a JSON object of model id → `{input, output}` in USD per million tokens (finite,
 * ≥ 0, at most 1,000,000). Empty or unset is no overrides. Throws one Error naming the first problem.
 */
export function parsePriceTable(raw: string | undefined): PriceTable {
  if (raw === undefined || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('MANGO_MODEL_PRICES must be a JSON object of model id → {"input": n, "output": n}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('MANGO_MODEL_PRICES must be a JSON object of model id → {"input": n, "output": n}');
  const table: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(parsed)) {
    const p = price as Record<string, unknown>;
    const ok = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1_000_000;
    if (
      !model ||
      typeof p !== 'object' ||
      p === null ||
      !ok(p.input) ||
      !ok(p.output) ||
      Object.keys(p).length !== 2
    )
      throw new Error(
        `MANGO_MODEL_PRICES["${model}"] must be {"input": n, "output": n} in USD per million tokens`,
      );
    table[model] = { input: p.input as number, output: p.output as number };
  }
  return table;
}

export interface TokenUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  /** Server tools the endpoint ran: web searches are priced per request, web fetches are not. */
  server_tool_use?: { web_search_requests?: number; web_fetch_requests?: number } | null;
}

/** The list price of one web search: $10 per 1,000 requests = 1 cent each, in units of 1e-8 USD. */
export const WEB_SEARCH_UNITS = 1_000_000;

export interface MonetaryAmount {
  /** Integer minor units (cents), no leading zeros. */
  amount: string;
  currency: 'USD';
}

/**
 * The list cost of cumulative token usage, rounded up to whole cents (so a budget is never under-counted).
 * Arithmetic is in integer units of 1e-8 USD per token, exact for every listed price.
 */
export function listCost(model: string, usage: TokenUsage, table: PriceTable = {}): MonetaryAmount | null {
  const price = priceOf(model, table);
  if (!price) return null;
  const perToken = (usdPerMillion: number) => Math.round(usdPerMillion * 100); // 1e-8 USD per token (operator prices round to that)
  const units =
    (usage.input_tokens ?? 0) * perToken(price.input) +
    (usage.output_tokens ?? 0) * perToken(price.output) +
    (usage.cache_creation_input_tokens ?? 0) * perToken(price.input * 1.25) +
    (usage.cache_read_input_tokens ?? 0) * perToken(price.input * 0.1) +
    (usage.server_tool_use?.web_search_requests ?? 0) * WEB_SEARCH_UNITS;
  return { amount: String(Math.ceil(units / 1_000_000)), currency: 'USD' };
}

const cents = (m: MonetaryAmount | null | undefined): bigint => BigInt(m?.amount ?? '0');

/** The pre-request gate: a budgeted Session whose list cost reached the limit makes no more model requests. */
export function budgetReached(budget: Budget | null, cost: MonetaryAmount | null | undefined): boolean {
  return budget !== null && cents(cost) >= cents(budget.max_list_cost);
}

/** Why a budget change is refused, or undefined: a new limit must exceed what has already been spent. */
export function budgetChangeProblem(
  next: Budget,
  cost: MonetaryAmount | null | undefined,
): string | undefined {
  if (cents(next.max_list_cost) <= cents(cost))
    return `budget.max_list_cost.amount must exceed the list cost already consumed (${cents(cost)} cents)`;
  return undefined;
}
