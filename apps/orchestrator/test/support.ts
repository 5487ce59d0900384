import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import {
  ApiUnderTest,
  AppProcess,
  dropBucket,
  httpClient,
  HttpClient,
  ScriptedModelServer,
  startApi,
  startFilesApp,
  startOrchestrator,
  startScriptedModel,
} from '@mango/testing';

export { startOrchestrator };

/**
 * With RECORD_HISTORIES=<dir>, keeps a finished workflow's history as a replay fixture (copy it into
 * apps/orchestrator/test/histories); otherwise does nothing.
 */
export async function recordHistory(workflowId: string, name: string, runId?: string): Promise<void> {
  const dir = process.env.RECORD_HISTORIES;
  if (!dir) return;
  const connection = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
  try {
    // The latest run, or the given one (a run that continued as new).
    const history = await new Client({ connection }).workflow.getHandle(workflowId, runId).fetchHistory();
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(history, null, 1));
  } finally {
    await connection.close();
  }
}

/** The activity types of a workflow's local activities, in the order its history recorded them. */
export async function localActivityTypes(workflowId: string): Promise<string[]> {
  const connection = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
  try {
    const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
    return (history.events ?? []).flatMap((e) => {
      const marker = e.markerRecordedEventAttributes;
      if (marker?.markerName !== 'core_local_activity') return [];
      const data = marker.details?.data?.payloads?.[0]?.data;
      return data ? [String(JSON.parse(Buffer.from(data).toString('utf8')).activity_type)] : [];
    });
  } finally {
    await connection.close();
  }
}

/**
 * A workflow's (non-local) activities in the order its history scheduled them, each with how it ended so
 * far (undefined: still running or waiting for a retry).
 */
export async function scheduledActivities(
  workflowId: string,
): Promise<Array<{ type: string; end?: 'completed' | 'failed' | 'timed_out' | 'canceled' }>> {
  const connection = await Connection.connect({ address: process.env.MANGO_TEMPORAL_ADDRESS! });
  try {
    const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
    const events = history.events ?? [];
    const byId = new Map<string, { type: string; end?: 'completed' | 'failed' | 'timed_out' | 'canceled' }>();
    for (const e of events) {
      const scheduled = e.activityTaskScheduledEventAttributes;
      if (scheduled) byId.set(String(e.eventId), { type: scheduled.activityType?.name ?? '' });
      const ends = [
        ['completed', e.activityTaskCompletedEventAttributes],
        ['failed', e.activityTaskFailedEventAttributes],
        ['timed_out', e.activityTaskTimedOutEventAttributes],
        ['canceled', e.activityTaskCanceledEventAttributes],
      ] as const;
      for (const [end, attrs] of ends) {
        const activity = attrs ? byId.get(String(attrs.scheduledEventId)) : undefined;
        if (activity) activity.end = end;
      }
    }
    return [...byId.values()];
  } finally {
    await connection.close();
  }
}

/** The model id the suites' Agents use; unknown to the built-in profiles. */
export const TEST_MODEL = 'm';

/**
 * The standard profile of the test model, given to every orchestrator startSessionStack starts (a suite's
 * own MANGO_MODEL_PROFILES replaces it): without it, 'm' gets the conservative default window for unknown
 * models (32,000 tokens), which refuses requests after a large tool result.
 */
export const TEST_MODEL_PROFILES = JSON.stringify({ [TEST_MODEL]: { context_window: 200_000 } });

export interface SessionStackOptions {
  /** Extra variables for apps/api. */
  apiEnv?: Record<string, string>;
  /** Extra variables for the orchestrator (MANGO_MODEL_PROFILES here replaces TEST_MODEL_PROFILES). */
  orchestratorEnv?: Record<string, string>;
  /**
   * Also start apps/files on this bucket (freshBucketEnv); the bucket is dropped at close. apps/api gets it
   * only through apiEnv.
   */
  files?: Record<string, string>;
  /** Create an Environment ('pool') and a supervisor key scoped to it. */
  environment?: boolean;
  /** The orchestrator's task queue (when apps/api needs it too); default `<label>-<now>`. */
  taskQueue?: string;
}

/**
 * What the orchestrator e2e suites run against: a real apps/api on its own database, the scripted model
 * server, one orchestrator on its own Temporal task queue, a Workspace key, and optionally apps/files and
 * an Environment with its supervisor key. One per test file (beforeAll); close() stops what it started.
 */
export interface SessionStack {
  api: ApiUnderTest;
  model: ScriptedModelServer;
  orchestrator: AppProcess;
  taskQueue: string;
  /** The Workspace API key and a client that sends it. */
  key: string;
  ws: HttpClient;
  /** With `files`: apps/files. */
  files?: { url: string; app: AppProcess };
  /** With `environment`: the Environment's id and a client with its supervisor key. */
  environmentId?: string;
  supervisor?: HttpClient;
  close(): Promise<void>;
}

/**
 * The beforeAll bound for startSessionStack: three or four processes that each may take up to two minutes
 * to start on a loaded 2-core machine (MANGO_TEST_START_TIMEOUT_MS).
 */
export const STACK_TIMEOUT_MS = 300_000;

export async function startSessionStack(
  label: string,
  options: SessionStackOptions = {},
): Promise<SessionStack> {
  const taskQueue = options.taskQueue ?? `${label}-${Date.now()}`;
  let api: ApiUnderTest | undefined;
  let model: ScriptedModelServer | undefined;
  let files: { url: string; app: AppProcess } | undefined;
  let orchestrator: AppProcess | undefined;
  const close = async () => {
    await orchestrator?.stop();
    await model?.close();
    await files?.app.stop();
    await api?.close();
    if (options.files) await dropBucket(options.files);
  };
  try {
    api = await startApi(label, options.apiEnv);
    if (options.files) files = await startFilesApp(api.db.url, options.files);
    model = await startScriptedModel();
    orchestrator = await startOrchestrator(api.db.url, {
      taskQueue,
      modelUrl: model.url,
      env: { MANGO_MODEL_PROFILES: TEST_MODEL_PROFILES, ...options.orchestratorEnv },
    });
    const key = (await api.issueKey('wrkspc_default')).api_key;
    const ws = httpClient(api.url, key);
    let environmentId: string | undefined;
    let supervisor: HttpClient | undefined;
    if (options.environment) {
      environmentId = (await ws.post('/v1/environments', { name: 'pool' })).body.id as string;
      supervisor = httpClient(api.url, (await api.issueKey('wrkspc_default', environmentId)).api_key);
    }
    return { api, model, orchestrator, taskQueue, key, ws, files, environmentId, supervisor, close };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}

/** A Session event as GET /v1/sessions/{id}/events lists it. */
export type SessionEvent = { id: string; type: string; [k: string]: any };

/** The Session's events (first 1,000). */
export async function sessionEvents(ws: HttpClient, sessionId: string): Promise<SessionEvent[]> {
  return (await ws.get(`/v1/sessions/${sessionId}/events?limit=1000`)).body.data as SessionEvent[];
}

/**
 * Polls the Session's events until `predicate` holds or `timeoutMs` passed; returns the last list either
 * way (the caller's assertion then says what was missing).
 */
export async function untilEvents(
  ws: HttpClient,
  sessionId: string,
  predicate: (events: SessionEvent[]) => boolean,
  timeoutMs = 90_000,
  intervalMs = 100,
): Promise<SessionEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await sessionEvents(ws, sessionId);
    if (predicate(list) || Date.now() > deadline) return list;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** The Session's events once it has gone idle `n` times; throws after `timeoutMs`. */
export async function waitForIdles(
  ws: HttpClient,
  sessionId: string,
  n: number,
  timeoutMs = 120_000,
): Promise<SessionEvent[]> {
  const list = await untilEvents(ws, sessionId, (l) => idleCount(l) >= n, timeoutMs);
  if (idleCount(list) < n) throw new Error(`session ${sessionId} did not reach ${n} idles`);
  return list;
}

const idleCount = (list: SessionEvent[]) => list.filter((e) => e.type === 'session.status_idle').length;
