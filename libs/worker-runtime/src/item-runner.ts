import { decodeWorkSecret, isRetryableStatus, MangoClient } from '@mango/sdk';
import { backoffMs, sleep } from './backoff';
import { HEALTHCHECK_TIMEOUT_MS, ProbeResult } from './healthcheck-probe';
import type { HandleItemOptions } from './item-options';
import { WorkLeaseKeeper } from './work-lease-keeper';

/**
 * Serves one already-acknowledged Work item (the seeds' `HandleItem`): first heartbeat before anything
 * else, continuous renewal, then the item's work. For a healthcheck: the callback with a 10-second
 * context (no callback → a failed result), then the Result, which stops the Work. Nothing is posted after
 * the lease is lost. Returns the process exit code.
 */
export async function handleItem(o: HandleItemOptions): Promise<number> {
  const token = decodeWorkSecret(o.secret).sessions_token;
  const client = new MangoClient({ baseUrl: o.baseUrl, apiKey: token, maxRetries: 2, timeoutMs: 15_000 });
  const { workId, environmentId } = o.identity;
  const cancel = new AbortController();
  const keeper = new WorkLeaseKeeper({
    client,
    environmentId,
    workId,
    ttlSeconds: o.leaseTtlSeconds ?? 60,
    onLost: (reason) => {
      o.log.warn({ work_id: workId, reason }, 'lease lost: cancelling, nothing more will be posted');
      cancel.abort();
    },
    onStopRequested: () => {
      o.log.info({ work_id: workId }, 'stop requested: cancelling');
      cancel.abort();
    },
  });
  try {
    await keeper.start();
  } catch (err) {
    o.log.error(
      { work_id: workId, err: String(err) },
      'first heartbeat refused; leaving the item to be reclaimed',
    );
    return 1;
  }
  try {
    switch (o.identity.workType) {
      case 'healthcheck':
        return await runHealthcheck(o, client, keeper, cancel);
      case 'session': {
        // Loaded here, not at start: a healthcheck's runner never loads the Session modules.
        const { EXIT_LEAVE_LEASE, runSessionActivation } = await import('./session-activation');
        const code = await runSessionActivation(o, client, cancel.signal, keeper);
        await keeper.close();
        // A temporary input failure leaves the lease to expire, so the Work is reclaimed and retried.
        if (!keeper.lost && code !== EXIT_LEAVE_LEASE) await forceStop(o, client);
        return code;
      }
    }
  } finally {
    await keeper.close();
  }
}

/** The final forced Stop of an activation whose lease we still hold (409: already stopped). */
async function forceStop(o: HandleItemOptions, client: MangoClient): Promise<void> {
  const { workId, environmentId } = o.identity;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await client.environments.work.stop(environmentId, workId, { force: true }, { maxRetries: 0 });
      o.log.info({ work_id: workId }, 'activation stopped');
      return;
    } catch (err) {
      const status = (err as { status?: number }).status;
      if (status !== undefined && !isRetryableStatus(status)) {
        if (status !== 409 && status !== 401)
          o.log.warn({ work_id: workId, err: String(err) }, 'stop refused');
        return;
      }
      await sleep(backoffMs(attempt));
    }
  }
}

async function runHealthcheck(
  o: HandleItemOptions,
  client: MangoClient,
  keeper: WorkLeaseKeeper,
  cancel: AbortController,
): Promise<number> {
  const { workId, environmentId } = o.identity;
  const context = AbortSignal.any([cancel.signal, AbortSignal.timeout(HEALTHCHECK_TIMEOUT_MS)]);
  let result: ProbeResult;
  if (!o.healthcheck)
    result = { status: 'failed', message: 'No healthcheck callback is configured for this worker' };
  else {
    result = await Promise.race([
      o.healthcheck({ signal: context, workdir: o.workdir }),
      new Promise<ProbeResult>((resolve) =>
        context.addEventListener(
          'abort',
          () => resolve({ status: 'failed', message: 'Healthcheck did not finish within 10 seconds' }),
          { once: true },
        ),
      ),
    ]);
  }
  if (keeper.lost || cancel.signal.aborted) {
    o.log.warn({ work_id: workId }, 'healthcheck cancelled or lease lost: no result posted');
    return 1;
  }
  // Identical retries are accepted by the server, so a lost success response is safe to resend.
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await client.environments.work.result(environmentId, workId, result, { maxRetries: 0 });
      o.log.info({ work_id: workId, status: result.status }, 'healthcheck result recorded');
      return 0;
    } catch (err) {
      const status = (err as { status?: number }).status;
      if (status !== undefined && !isRetryableStatus(status)) {
        o.log.error({ work_id: workId, err: String(err) }, 'result refused');
        return 1;
      }
      await sleep(backoffMs(attempt));
    }
  }
  return 1;
}
