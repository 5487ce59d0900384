import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export const HEALTHCHECK_TIMEOUT_MS = 10_000;
export const HEALTHCHECK_SUCCESS_MESSAGE = 'Sandbox process and workspace check passed';

export interface ProbeResult {
  status: 'succeeded' | 'failed';
  message: string;
}

/**
 * The fixed healthcheck (see docs/operator-guide.md, The Docker supervisor): a Bash subprocess writes, reads back and removes a small file in the
 * workspace, bounded to 10 s. No caller-provided command. Refuses to run without the launcher's
 * sandbox marker, so it never executes on an operator's host by accident.
 */
export async function runHealthcheckProbe(options: {
  workdir: string;
  sandboxMarker: string | undefined;
  timeoutMs?: number;
  bash?: string;
}): Promise<ProbeResult> {
  if (options.sandboxMarker !== 'docker') {
    return { status: 'failed', message: 'Refusing to run the healthcheck probe outside the Mango sandbox' };
  }
  const token = randomBytes(8).toString('hex');
  const script = [
    'set -eu',
    `f="$1/.mango-healthcheck-${token}"`,
    `printf '%s' "${token}" > "$f"`,
    `test "$(cat "$f")" = "${token}"`,
    'rm -f "$f"',
    'test ! -e "$f"',
  ].join('\n');
  return new Promise((resolve) => {
    const child = spawn(options.bash ?? '/bin/bash', ['-c', script, 'probe', options.workdir], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: '/usr/bin:/bin' },
    });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr = (stderr + String(d)).slice(-512)));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? HEALTHCHECK_TIMEOUT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({
        status: 'failed',
        message: `Could not start the sandbox process: ${err.message}`.slice(0, 1024),
      });
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ status: 'succeeded', message: HEALTHCHECK_SUCCESS_MESSAGE });
      else if (signal === 'SIGKILL')
        resolve({ status: 'failed', message: 'Sandbox process did not finish within 10 seconds' });
      else
        resolve({
          status: 'failed',
          message: `Sandbox workspace check failed (exit ${code}): ${stderr.trim()}`.slice(0, 1024),
        });
    });
  });
}
