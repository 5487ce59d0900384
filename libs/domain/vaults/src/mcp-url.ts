import { invalidRequest } from '@mango/domain-kernel';

export const MCP_URL_MAX = 2048;

/**
 * The matching key of an MCP server URL (openapi.yaml, Vaults; docs/api-guide.md, Vaults: "URL matching normalizes scheme/host case, default
 * port, trailing slash"). Two URLs name the same server exactly when their keys are equal:
 * - scheme and host are lower-cased, an explicit default port (80 for http, 443 for https) is dropped;
 * - one trailing `/` of the path is dropped (`https://h/mcp/` ≡ `https://h/mcp`, `https://h/` ≡ `https://h`);
 * - the query is kept as written; a fragment is ignored.
 * Returns null for anything that is not an absolute http(s) URL without user info.
 */
export function mcpUrlKey(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  if (u.username || u.password || !u.hostname) return null;
  // WHATWG URL already lower-cases scheme and host and drops default ports.
  let path = u.pathname;
  if (path.endsWith('/')) path = path.slice(0, -1);
  return `${u.protocol}//${u.host}${path}${u.search}`;
}

/** Reads an `mcp_server_url` field: an absolute http(s) URL, ≤ 2048 characters, no user info. */
export function readMcpServerUrl(v: unknown, path: string): { url: string; key: string } {
  if (typeof v !== 'string') throw invalidRequest(`${path} must be a string`);
  if (v.length === 0) throw invalidRequest(`${path} must not be empty`);
  if (v.length > MCP_URL_MAX) throw invalidRequest(`${path} must have at most ${MCP_URL_MAX} characters`);
  const key = mcpUrlKey(v);
  if (key === null)
    throw invalidRequest(`${path} must be an absolute http or https URL without user name or password`);
  return { url: v, key };
}
