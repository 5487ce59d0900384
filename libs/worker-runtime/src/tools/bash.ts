import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { IPty, spawn } from '@lydell/node-pty';
import { killSession } from './process-session';
import { shellEnv } from './shell-env';
import { Tool, ToolError } from './types';

export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_OUTPUT_CAP = 102_400;
const DEFAULT_SHELL_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };

interface Shell {
  pty: IPty;
  exited: Promise<void>;
  dead: boolean;
  onData?: (chunk: string) => void;
  onExit?: () => void;
}

/**
 * `bash` (docs/api-guide.md, Sessions): one persistent Bash on a PTY per Work container, so cwd and environment
 * survive calls. Each command is sourced from a private file inside `{ …; } </dev/null 2>&1`, framed by
 * per-call random begin/end markers that carry `$?`. Timeout, cancellation, shell death or corrupt framing
 * kills the whole PTY session before another call can run; the next call starts a fresh shell. Calls are
 * serialised. The shell environment has Mango credentials scrubbed.
 */
export class BashTool implements Tool {
  readonly name = 'bash';
  private shell?: Shell;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly dir: string;

  constructor(
    private readonly options: { workdir: string; env?: NodeJS.ProcessEnv; defaultTimeoutMs?: number },
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'mango-bash-'));
  }

  run(input: Record<string, unknown>, ctx: { signal: AbortSignal }): Promise<string> {
    const next = this.queue.then(() => this.call(input, ctx.signal));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async call(input: Record<string, unknown>, signal: AbortSignal): Promise<string> {
    const command = typeof input.command === 'string' ? input.command : undefined;
    if (input.restart === true) {
      await this.kill();
      if (!command) return 'bash session restarted';
    }
    if (!command) throw new ToolError('bash: command is required');
    const timeoutMs =
      typeof input.timeout_ms === 'number' && input.timeout_ms > 0
        ? Math.floor(input.timeout_ms)
        : (this.options.defaultTimeoutMs ?? BASH_DEFAULT_TIMEOUT_MS);
    if (signal.aborted) throw new ToolError('bash: cancelled');
    const shell = this.shell && !this.shell.dead ? this.shell : this.start();
    const nonce = randomBytes(12).toString('hex');
    const file = join(this.dir, `cmd-${nonce}.sh`);
    await writeFile(file, `{ ${command}\n} </dev/null 2>&1\n`, { mode: 0o600 });
    try {
      const { code, output } = await this.exchange(shell, nonce, file, timeoutMs, signal);
      if (code !== 0) throw new ToolError(output || `exit ${code}`);
      return output;
    } finally {
      await rm(file, { force: true });
    }
  }

  private exchange(
    shell: Shell,
    nonce: string,
    file: string,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ code: number; output: string }> {
    const begin = `MANGOB_${nonce}`;
    const end = new RegExp(`MANGOE_${nonce}:(-?\\d+)\\r?\\n`);
    return new Promise((resolve, reject) => {
      let acc = '';
      let started = false;
      let truncated = false;
      const fail = (message: string) => {
        cleanup();
        void this.kill().then(() => reject(new ToolError(message)));
      };
      const timer = setTimeout(() => fail(`bash: bash command timed out after ${timeoutMs}ms`), timeoutMs);
      const onAbort = () => fail('bash: cancelled');
      signal.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        shell.onData = undefined;
        shell.onExit = undefined;
      };
      shell.onExit = () => {
        cleanup();
        reject(new ToolError('bash: bash session terminated'));
      };
      shell.onData = (chunk) => {
        acc += chunk;
        if (!started) {
          const at = acc.indexOf(begin);
          if (at < 0) {
            if (end.test(acc)) fail('bash: corrupt completion framing');
            else acc = acc.slice(-begin.length * 2);
            return;
          }
          const nl = acc.indexOf('\n', at);
          if (nl < 0) return;
          started = true;
          acc = acc.slice(nl + 1);
        }
        const m = end.exec(acc);
        if (!m) {
          if (acc.length > BASH_OUTPUT_CAP + 256) {
            acc = acc.slice(-(BASH_OUTPUT_CAP + 256));
            truncated = true;
          }
          if (acc.includes(begin)) fail('bash: corrupt completion framing');
          return;
        }
        cleanup();
        let output = acc.slice(0, m.index);
        if (output.length > BASH_OUTPUT_CAP) {
          output = output.slice(-BASH_OUTPUT_CAP);
          truncated = true;
        }
        output = stripVTControlCharacters(output.replace(/\r+\n/g, '\n').replace(/\r/g, '')).replace(
          /\n+$/,
          '',
        );
        resolve({ code: Number(m[1]), output: truncated ? `[output truncated]\n${output}` : output });
      };
      shell.pty.write(
        ` printf '%s_%s\\n' MANGOB ${nonce}; . '${file}'; printf '%s_%s:%s\\n' MANGOE ${nonce} "$?"\n`,
      );
    });
  }

  private start(): Shell {
    const pty = spawn('/bin/bash', ['--noprofile', '--norc'], {
      name: 'dumb',
      cols: 200,
      rows: 50,
      cwd: this.options.workdir,
      env: shellEnv(this.options.env ?? DEFAULT_SHELL_ENV),
    });
    let exitedResolve!: () => void;
    const shell: Shell = { pty, dead: false, exited: new Promise<void>((r) => (exitedResolve = r)) };
    pty.onData((d) => shell.onData?.(d));
    pty.onExit(() => {
      shell.dead = true;
      exitedResolve();
      shell.onExit?.();
    });
    this.shell = shell;
    return shell;
  }

  /** Kills the shell's whole PTY session and waits (bounded) for it to exit. */
  private async kill(): Promise<void> {
    const shell = this.shell;
    this.shell = undefined;
    if (!shell || shell.dead) return;
    shell.dead = true;
    shell.onExit = undefined;
    await killSession(shell.pty.pid);
    try {
      shell.pty.kill('SIGKILL');
    } catch {
      // already gone
    }
    await Promise.race([shell.exited, new Promise((r) => setTimeout(r, 2000).unref())]);
  }

  async close(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
