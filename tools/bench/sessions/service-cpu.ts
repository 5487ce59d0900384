/**
 * CPU time (user + system, ms) of the real services this machine runs for the bench, read from Linux
 * /proc through the pid files tools/ci/services.sh writes under $MANGO_SERVICES_RUN (NaN when the
 * services run elsewhere or the files cannot be read): the share of an append's cost that lands in
 * Temporal's server and in PostgreSQL, next to Mango's own processes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** utime, stime, cutime, cstime of one process, in ms (clock ticks are 10 ms on Linux). */
function times(pid: number): number[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [f[11], f[12], f[13], f[14]].map((x) => Number(x) * 10);
}

function pidIn(file: string): number {
  return Number(readFileSync(file, 'utf8').split('\n')[0]);
}

/** Temporal's dev server (one process). */
export function temporalCpuMs(): number {
  try {
    const [u, s] = times(pidIn(join(process.env.MANGO_SERVICES_RUN!, 'pid/temporal.pid')));
    return u! + s!;
  } catch {
    return NaN;
  }
}

/**
 * PostgreSQL: the postmaster with its children reaped so far (cutime, cstime) and its live children
 * (backends, background workers). A backend that exits between two readings moves from the one sum to
 * the other, so differences stay right.
 */
export function postgresCpuMs(): number {
  try {
    const data = process.env.MANGO_SERVICES_DATA ?? process.env.MANGO_SERVICES_RUN!;
    const master = pidIn(join(data, 'pg/data/postmaster.pid'));
    let total = times(master).reduce((a, b) => a + b, 0);
    const children = readFileSync(`/proc/${master}/task/${master}/children`, 'utf8')
      .split(' ')
      .filter(Boolean);
    for (const c of children) {
      try {
        const [u, s] = times(Number(c));
        total += u! + s!;
      } catch {
        // exited meanwhile: its time is in the postmaster's cutime/cstime from now on
      }
    }
    return total;
  } catch {
    return NaN;
  }
}
