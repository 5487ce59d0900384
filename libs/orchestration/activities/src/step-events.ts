import type { ModelResponse } from '@mango/adapter-model';
import { addedListCostUsd, type SessionUsage } from '@mango/domain-sessions';
import type { NewSessionEvent } from '@mango/persistence';
import type { MangoMetrics } from '@mango/platform-metrics';

/** Shared by the Session activities: how they shape their events, count usage and find a turn's trace. */

/**
 * Output tokens of a request that is not an Agent's own step (kept for auxiliary requests). The Agent's
 * steps take `max_tokens` from the model profile (libs/domain/sessions `model-profiles.ts`).
 */
export const MAX_TOKENS = 4096;

/** Output tokens of a compaction summary (at most the profile's output limit). */
export const SUMMARY_MAX_TOKENS = 8192;

export type StoredEvent = NewSessionEvent;
export const internal = (
  type: string,
  body: Record<string, unknown>,
  idempotencyKey: string,
): StoredEvent => ({
  type,
  body,
  processed: true,
  runnable: false,
  idempotencyKey,
});

/** Tokens of one recorded model response, and the list cost it added (the change in the cumulative cost). */
export function countUsage(
  metrics: MangoMetrics,
  model: string,
  add: ModelResponse['usage'],
  { before, after }: { before: SessionUsage; after: SessionUsage },
): void {
  const tokens = {
    input: add.input_tokens,
    output: add.output_tokens,
    cache_read: add.cache_read_input_tokens ?? 0,
    cache_creation: add.cache_creation_input_tokens ?? 0,
  };
  for (const [type, n] of Object.entries(tokens)) if (n > 0) metrics.modelTokens.inc({ model, type }, n);
  if (after.list_cost) metrics.modelListCost.inc({ model }, addedListCostUsd(before, after));
}
