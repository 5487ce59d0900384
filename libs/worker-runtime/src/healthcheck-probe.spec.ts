import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backoffMs } from './backoff';
import { HEALTHCHECK_SUCCESS_MESSAGE, runHealthcheckProbe } from './healthcheck-probe';

describe('the fixed healthcheck probe', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'probe-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes, reads back and removes a file, leaving the workspace as it was', async () => {
    expect(await runHealthcheckProbe({ workdir: dir, sandboxMarker: 'docker' })).toEqual({
      status: 'succeeded',
      message: HEALTHCHECK_SUCCESS_MESSAGE,
    });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses to run outside the launcher sandbox', async () => {
    expect(await runHealthcheckProbe({ workdir: dir, sandboxMarker: undefined })).toMatchObject({
      status: 'failed',
      message: expect.stringMatching(/outside the Mango sandbox/),
    });
  });

  it('reports a workspace it cannot write as failed, with the reason', async () => {
    chmodSync(dir, 0o500);
    const result = await runHealthcheckProbe({ workdir: join(dir, 'missing'), sandboxMarker: 'docker' });
    expect(result.status).toBe('failed');
    expect(result.message).toMatch(/workspace check failed/);
  });

  it('is bounded: a stuck process is killed and reported', async () => {
    const stuck = join(dir, 'stuck.sh');
    writeFileSync(stuck, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
    const started = Date.now();
    const result = await runHealthcheckProbe({
      workdir: dir,
      sandboxMarker: 'docker',
      timeoutMs: 300,
      bash: stuck,
    });
    expect(result).toEqual({ status: 'failed', message: 'Sandbox process did not finish within 10 seconds' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });
});

describe('backoff', () => {
  it('grows exponentially with ±25% jitter and a cap', () => {
    expect(backoffMs(0, { random: () => 0.5 })).toBe(250);
    expect(backoffMs(3, { random: () => 0.5 })).toBe(2000);
    expect(backoffMs(20, { random: () => 0.5 })).toBe(10_000);
    expect(backoffMs(2, { random: () => 0 })).toBe(750);
    expect(backoffMs(2, { random: () => 1 })).toBe(1250);
  });
});
