import { decodeWorkSecret, MangoClient } from '@mango/sdk';
import type { HandleItemOptions } from './item-options';
import { WorkLeaseKeeper } from './work-lease-keeper';
import { MemoryAttachment, MemorySync, sdkMemoryApi } from './memory';
import { SessionToolRunner } from './session-tool-runner';
import { SessionWithSkills, SkillRetrievalError, SkillStagingError, stageSessionSkills } from './skills';
import type { ToolRoot } from './tools/types';
import { createToolset } from './tools/toolset';
import { commandTool } from './custom-tools';

/**
 * Exit code of an activation that leaves its lease to expire on purpose (a temporary failure to prepare
 * its inputs): no Fail and no final Stop, so the Work is reclaimed and retried by the next claim.
 */
export const EXIT_LEAVE_LEASE = 75;

/** Teardown bounds for Memory (see docs/operator-guide.md, The Docker supervisor: result delivery and Memory teardown finish before any hard kill). */
const MEMORY_FINAL_SYNC_MS = 30_000;
const MEMORY_FLUSH_MS = 30_000;

/**
 * One Session activation inside the sandbox: read the Session with the Work token, stage its frozen
 * Skills (see docs/operator-guide.md, The Docker supervisor: a permanent validation failure → Fail; a temporary retrieval failure → the lease is
 * left to expire), mount its Memory Stores, then serve its tool calls with the six tools until the Session
 * goes idle, ends, or the lease is stopped or lost. Teardown, while the lease keeps renewing: the tools
 * (and the Bash PTY) close, Memory gets a final full sync on a clean end and a bounded push-only flush on
 * every end, and the staged Skills are removed. Returns the process exit code.
 */
export async function runSessionActivation(
  o: HandleItemOptions,
  client: MangoClient,
  signal: AbortSignal,
  keeper: WorkLeaseKeeper,
): Promise<number> {
  const sessionId = o.identity.sessionId;
  const log = o.log;
  if (!sessionId) {
    log.error({ work_id: o.identity.workId }, 'Session Work without MANGO_SESSION_ID');
    return 1;
  }
  let session: SessionWithSkills & { status: string; resources?: Array<{ type: string }> };
  try {
    session = (await client.sessions.retrieve(sessionId, {
      signal,
      maxRetries: 4,
    })) as unknown as typeof session;
  } catch (err) {
    log.error({ session_id: sessionId, err: String(err) }, 'could not read the Session');
    return 1;
  }
  if (session.status === 'terminated') {
    log.info({ session_id: sessionId }, 'the Session is terminated: nothing to run');
    return 0;
  }

  const token = decodeWorkSecret(o.secret).sessions_token;
  let disposeSkills: (() => Promise<void>) | undefined;
  try {
    const staged = await stageSessionSkills({
      session,
      workdir: o.workdir,
      baseUrl: o.baseUrl,
      token,
      signal,
    });
    disposeSkills = staged.dispose;
    if (staged.staged.length)
      log.info({ session_id: sessionId, skills: staged.staged.length }, 'skills staged');
  } catch (err) {
    if (err instanceof SkillStagingError) return failWork(o, client, err.message);
    if (err instanceof SkillRetrievalError) {
      log.warn(
        { session_id: sessionId, err: err.message },
        'skills unavailable: leaving the lease to expire',
      );
      return EXIT_LEAVE_LEASE;
    }
    throw err;
  }

  const attachments = (session.resources ?? []).filter(
    (r): r is MemoryAttachment & { type: string } => r.type === 'memory_store',
  );
  // Memory calls get their own client: a write may legitimately take longer than the 15 s bound of other
  // calls (see docs/operator-guide.md, The Docker supervisor: teardown keeps the lease renewed while it finishes), within the teardown bounds.
  const memoryClient = new MangoClient({
    baseUrl: o.baseUrl,
    apiKey: token,
    maxRetries: 0,
    timeoutMs: MEMORY_FINAL_SYNC_MS + MEMORY_FLUSH_MS,
  });
  const memory = attachments.length
    ? new MemorySync({ client: sdkMemoryApi(memoryClient), sessionId, attachments, root: o.memoryRoot, log })
    : undefined;
  let memoryRoots: ToolRoot[] = [];
  try {
    if (memory) memoryRoots = await memory.start(signal);
  } catch (err) {
    log.warn(
      { session_id: sessionId, err: String(err) },
      'memory could not be mounted: leaving the lease to expire',
    );
    await memory?.dispose({ removeDirs: true }).catch(() => undefined);
    await disposeSkills?.().catch(() => undefined);
    return EXIT_LEAVE_LEASE;
  }

  const tools = createToolset({
    workdir: o.workdir,
    roots: [...(o.roots ?? []), ...memoryRoots],
    env: o.shellEnv,
    bashTimeoutMs: o.bashTimeoutMs,
  });
  const customTools = (o.customTools ?? []).map((spec) =>
    commandTool(spec, { workdir: o.workdir, env: o.shellEnv }),
  );
  if (customTools.length)
    log.info({ session_id: sessionId, custom_tools: customTools.map((t) => t.name) }, 'custom tools served');
  const runner = new SessionToolRunner({
    client,
    sessionId,
    tools,
    customTools,
    signal,
    log,
    maxIdleMs: o.maxIdleMs,
    drain: o.drain,
    maxConcurrentCalls: o.maxConcurrentCalls,
    toolTimeoutMs: o.toolTimeoutMs,
    // The contract: Memory is uploaded when the Session goes idle — a push-only pass (creates and
    // updates; deletions and pulls stay with the full passes), besides Mango's 15 s cadence.
    onIdle: memory
      ? () =>
          signal.aborted
            ? Promise.resolve()
            : memory
                .flush(MEMORY_FLUSH_MS)
                .then(() => undefined)
                .catch((err: unknown) => log.warn({ err: String(err) }, 'memory sync at idle failed'))
      : undefined,
    afterCall: async () => {
      await o.afterToolCall?.();
      await memory?.syncIfDue().catch((err: unknown) => log.warn({ err: String(err) }, 'memory sync failed'));
    },
    sendWindowMs: () => keeper.ttlMs,
  });
  let clean = false;
  try {
    const reason = await runner.run();
    clean = reason !== 'refused' && !signal.aborted && !keeper.lost;
    log.info({ session_id: sessionId, reason, results: runner.posted.length }, 'session activation ended');
    // 'refused': the token died with the lease; handleItem's final Stop is then answered 401 and ignored.
    return reason === 'refused' ? 1 : 0;
  } finally {
    await Promise.all(tools.map((t) => t.close?.().catch(() => undefined)));
    if (memory) {
      if (clean && !keeper.lost)
        await memory
          .finalSync(MEMORY_FINAL_SYNC_MS)
          .catch((err: unknown) => log.warn({ err: String(err) }, 'final memory sync failed'));
      if (!keeper.lost)
        await memory
          .flush(MEMORY_FLUSH_MS)
          .catch((err: unknown) => log.warn({ err: String(err) }, 'memory flush failed'));
      await memory.dispose({ removeDirs: true }).catch(() => undefined);
    }
    await disposeSkills?.().catch(() => undefined);
  }
}

/** Work Fail for a permanent input error (the Session terminates); the item then ends without a Stop. */
async function failWork(o: HandleItemOptions, client: MangoClient, message: string): Promise<number> {
  const { workId, environmentId } = o.identity;
  try {
    await client.environments.work.fail(environmentId, workId, { message: message.slice(0, 1024) });
    o.log.error({ work_id: workId, err: message }, 'permanent input error: Work failed');
  } catch (err) {
    o.log.error({ work_id: workId, err: String(err) }, 'Fail was refused');
  }
  return 1;
}
