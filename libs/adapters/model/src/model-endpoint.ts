/** The public Anthropic API: the endpoint when nothing else is configured. */
export const PUBLIC_MODEL_BASE_URL = 'https://api.anthropic.com';

export interface ModelEndpointSettings {
  MANGO_MODEL_BASE_URL?: string;
  MANGO_MODEL_API_KEY?: string;
  ANTHROPIC_BASE_URL?: string;
  ANTHROPIC_API_KEY?: string;
}

export type ModelEndpoint =
  | { usable: true; baseUrl: string; apiKey: string; described: string }
  | { usable: false; baseUrl: string; reason: string; described: string };

/**
 * Which model endpoint the orchestrator uses (docs/operator-guide.md "Model endpoint"): MANGO_MODEL_BASE_URL,
 * else ANTHROPIC_BASE_URL, else the public Anthropic API; the key is MANGO_MODEL_API_KEY, else
 * ANTHROPIC_API_KEY. The public API without a key is unusable: every turn ends at once with a session.error
 * that names the variables (no retries). A configured endpoint may go without a key (a local gateway).
 */
export function resolveModelEndpoint(env: ModelEndpointSettings): ModelEndpoint {
  const configured = env.MANGO_MODEL_BASE_URL || env.ANTHROPIC_BASE_URL || '';
  const baseUrl = configured || PUBLIC_MODEL_BASE_URL;
  const from = env.MANGO_MODEL_BASE_URL
    ? 'MANGO_MODEL_BASE_URL'
    : env.ANTHROPIC_BASE_URL
      ? 'ANTHROPIC_BASE_URL'
      : 'the default';
  const apiKey = env.MANGO_MODEL_API_KEY || env.ANTHROPIC_API_KEY || '';
  const keyFrom = env.MANGO_MODEL_API_KEY
    ? 'MANGO_MODEL_API_KEY'
    : env.ANTHROPIC_API_KEY
      ? 'ANTHROPIC_API_KEY'
      : 'none';
  const described = `${baseUrl} (from ${from}; key: ${keyFrom})`;
  if (!configured && !apiKey)
    return {
      usable: false,
      baseUrl,
      described,
      reason:
        'no model API key is configured: set MANGO_MODEL_API_KEY (or ANTHROPIC_API_KEY) for the orchestrator, ' +
        'or MANGO_MODEL_BASE_URL for another endpoint, and restart it',
    };
  return { usable: true, baseUrl, apiKey, described };
}
