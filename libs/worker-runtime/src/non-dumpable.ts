import koffi from 'koffi';

const PR_SET_DUMPABLE = 4;
const PR_GET_DUMPABLE = 3;

let prctl: ((option: number, a2: number, a3: number, a4: number, a5: number) => number) | undefined;

function load() {
  if (!prctl) {
    const libc = koffi.load('libc.so.6');
    prctl = libc.func(
      'int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)',
    );
  }
  return prctl!;
}

/**
 * Makes this process non-dumpable (prctl PR_SET_DUMPABLE 0): same-uid processes — the Bash children the
 * tools start — can no longer read its /proc environ, memory or file descriptors. The item runner does
 * this before it reads the Work secret.
 */
export function makeNonDumpable(): void {
  const fn = load();
  if (fn(PR_SET_DUMPABLE, 0, 0, 0, 0) !== 0) throw new Error('prctl(PR_SET_DUMPABLE, 0) failed');
  if (fn(PR_GET_DUMPABLE, 0, 0, 0, 0) !== 0) throw new Error('the process is still dumpable');
}
