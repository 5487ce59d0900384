/**
 * The routes a Work token may call: the one list the sandbox's API socket enforces before anything leaves
 * the sandbox (docs/architecture.md "Sandbox network"). The API still authorizes every request itself; this
 * list only keeps a sandbox from reaching any other route of the control plane through its socket.
 * A test in apps/api compares it with the controllers' `@AllowCredentials(…'work')` declarations, so the two
 * cannot drift apart.
 */
export interface WorkTokenRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** The route template, as the controllers declare it (`:name` segments). */
  path: string;
}

const ID = '[A-Za-z0-9_-]{1,128}';

export const WORK_TOKEN_ROUTES: readonly WorkTokenRoute[] = [
  { method: 'GET', path: '/v1/sessions/:sessionId' },
  { method: 'POST', path: '/v1/sessions/:sessionId/events' },
  { method: 'GET', path: '/v1/sessions/:sessionId/events' },
  { method: 'GET', path: '/v1/sessions/:sessionId/events/stream' },
  { method: 'POST', path: '/v1/environments/:environmentId/work/:workId/heartbeat' },
  { method: 'POST', path: '/v1/environments/:environmentId/work/:workId/result' },
  { method: 'POST', path: '/v1/environments/:environmentId/work/:workId/fail' },
  { method: 'POST', path: '/v1/environments/:environmentId/work/:workId/stop' },
  { method: 'GET', path: '/v1/skills/:skillId/versions/:version' },
  { method: 'GET', path: '/v1/skills/:skillId/versions/:version/content' },
  { method: 'GET', path: '/v1/memory_stores/:memoryStoreId' },
  { method: 'POST', path: '/v1/memory_stores/:memoryStoreId/memories' },
  { method: 'GET', path: '/v1/memory_stores/:memoryStoreId/memories' },
  { method: 'GET', path: '/v1/memory_stores/:memoryStoreId/memories/:memoryId' },
  { method: 'POST', path: '/v1/memory_stores/:memoryStoreId/memories/:memoryId' },
  { method: 'DELETE', path: '/v1/memory_stores/:memoryStoreId/memories/:memoryId' },
];

const MATCHERS = WORK_TOKEN_ROUTES.map((r) => ({
  method: r.method,
  re: new RegExp(`^${r.path.replace(/:[A-Za-z]+/g, ID)}$`),
}));

/**
 * Whether a request line may pass the sandbox's socket: the method and the path (query string ignored,
 * no dot segments, no encoded slashes) must match one Work token route exactly.
 */
export function isWorkTokenRoute(method: string, rawPath: string): boolean {
  const path = rawPath.split('?', 1)[0]!;
  if (!path.startsWith('/') || /%2f|%5c|\/\.\.?(\/|$)|\/\//i.test(path)) return false;
  const m = method.toUpperCase();
  return MATCHERS.some((r) => r.method === m && r.re.test(path));
}
