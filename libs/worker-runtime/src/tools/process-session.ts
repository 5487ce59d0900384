import { readdir, readFile } from 'node:fs/promises';

/**
 * SIGKILLs every process in Linux session `sid` (the shell is its PTY's session leader, so this reaches
 * background jobs and their children, not just the shell). /proc/<pid>/stat field 6 is the session id.
 */
export async function killSession(sid: number): Promise<void> {
  const pids = await readdir('/proc').catch(() => [] as string[]);
  await Promise.all(
    pids
      .filter((p) => /^\d+$/.test(p))
      .map(async (p) => {
        const stat = await readFile(`/proc/${p}/stat`, 'utf8').catch(() => '');
        // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(fields[3]) === sid) {
          try {
            process.kill(Number(p), 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }),
  );
}
