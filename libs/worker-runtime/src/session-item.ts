import { MangoClient } from '@mango/sdk';
import type { HandleItemOptions } from './item-runner';
import { LeaseKeeper } from './lease-keeper';
import { SessionToolRunner } from './session-tool-runner';
import { createToolset } from './tools/toolset';

/**
 * One Session activation inside the sandbox: read the Session with the Work token, then serve its tool
 * calls with the six tools until the Session goes idle, ends, or the lease is stopped or lost. The
 * tools (and the Bash PTY) are closed before returning. Returns the process exit code.
 */
export async function runSession(
  o: HandleItemOptions,
  client: MangoClient,
  signal: AbortSignal,
  keeper: LeaseKeeper,
): Promise<number> {
  const sessionId = o.identity.sessionId;
  const log = o.log;
  if (!sessionId) {
    log.error({ work_id: o.identity.workId }, 'Session Work without MANGO_SESSION_ID');
    return 1;
  }
  let status: string;
  try {
    status = (await client.sessions.retrieve(sessionId, { signal, maxRetries: 4 })).status;
  } catch (err) {
    log.error({ session_id: sessionId, err: String(err) }, 'could not read the Session');
    return 1;
  }
  if (status === 'terminated') {
    log.info({ session_id: sessionId }, 'the Session is terminated: nothing to run');
    return 0;
  }
  const tools = createToolset({ workdir: o.workdir, roots: o.roots, env: o.shellEnv });
  const runner = new SessionToolRunner({
    client,
    sessionId,
    tools,
    signal,
    log,
    maxIdleMs: o.maxIdleMs,
    drain: o.drain,
    afterCall: o.afterToolCall,
    sendWindowMs: () => keeper.ttlMs,
  });
  try {
    const reason = await runner.run();
    log.info({ session_id: sessionId, reason, results: runner.posted.length }, 'session activation ended');
    // 'refused': the token died with the lease; handleItem's final Stop is then answered 401 and ignored.
    return reason === 'refused' ? 1 : 0;
  } finally {
    await Promise.all(tools.map((t) => t.close?.().catch(() => undefined)));
  }
}
