import { ID_PREFIXES } from '@mango/domain-kernel';

/** Who made an audited request: the kind of credential and its id (a key id, or the Work item of a Work token). */
export interface AuditActor {
  kind: 'workspace_key' | 'environment_key' | 'work_token';
  id: string;
}

/** What the audit log knows of a finished request (nothing of its body but the created resource's id). */
export interface FinishedRequest {
  method: string;
  /** The matched Express route (`/v1/sessions/:sessionId/events`); undefined when no route matched. */
  routeTemplate: string | undefined;
  params: Record<string, string>;
  status: number;
  /** The handler's return value when it succeeded (only its `id` is read). */
  result?: unknown;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const ID_PREFIX_LIST = Object.values(ID_PREFIXES);

/**
 * Whether a request belongs in the audit log: every write (POST, PUT, PATCH, DELETE) that reached a route,
 * whatever its outcome, except fair-use refusals (429: the limiter's own metric counts them, and recording
 * each would let a flood of refused requests write the rows the limiter exists to spare).
 */
export function isAudited(req: Pick<FinishedRequest, 'method' | 'routeTemplate' | 'status'>): boolean {
  return WRITE_METHODS.has(req.method) && req.routeTemplate !== undefined && req.status !== 429;
}

/** `POST /v1/sessions/{session_id}/events`: the method and the route with its parameters named. */
export function auditOperation(method: string, routeTemplate: string): string {
  const path = routeTemplate.replace(/:([A-Za-z]+)/g, (_m, name: string) => `{${snakeCase(name)}}`);
  return `${method} ${path}`;
}

/**
 * The resource a write touched: the id of what it created or returned (a 2xx answer whose body has an
 * `id` of a Mango kind), else the last id in its path (the Session events are sent to), else null.
 */
export function auditResourceId(req: Pick<FinishedRequest, 'params' | 'status' | 'result'>): string | null {
  if (req.status >= 200 && req.status < 300) {
    const id = (req.result as { id?: unknown } | null | undefined)?.id;
    if (typeof id === 'string' && isMangoId(id)) return id;
  }
  const ids = Object.values(req.params).filter(isMangoId);
  return ids.length ? ids[ids.length - 1]! : null;
}

export function auditOutcome(status: number): 'succeeded' | 'failed' {
  return status >= 200 && status < 400 ? 'succeeded' : 'failed';
}

function isMangoId(value: string): boolean {
  return value.length <= 64 && ID_PREFIX_LIST.some((p) => value.startsWith(p) && value.length > p.length);
}

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
