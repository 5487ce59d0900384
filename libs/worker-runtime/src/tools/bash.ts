import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { stripVTControlCharacters } from 'node:util';
import { IPty, spawn } from '@lydell/node-pty';
import { BASH_DEFAULT_TIMEOUT_MS, BASH_OUTPUT_LIMIT_CHARS, BASH_SPILL_DIR } from '../worker-contract';
import { killSession } from './process-session';
import { shellEnv } from './shell-env';
import { Tool, ToolError, ToolRunContext } from './types';

const DEFAULT_SHELL_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin' };
/** The Thread key of the primary Thread (calls without `session_thread_id`). */
const PRIMARY = '';

export interface BashOptions {
  workdir: string;
  env?: NodeJS.ProcessEnv;
  /** A command's bound when the call passes no `timeout_ms` (default: the contract's 295 s). */
  defaultTimeoutMs?: number;
  /** Characters of stdout-then-stderr a result carries before it is cut (default: the contract's 30,000). */
  outputLimitChars?: number;
}

interface Shell {
  pty: IPty;
  exited: Promise<void>;
  dead: boolean;
  onData?: (chunk: string) => void;
  onExit?: () => void;
}

/**
 * `bash` (docs/worker-contract.md): one persistent Bash on a PTY **per Thread** of the Session, so cwd and
 * environment survive a Thread's calls and Threads never share a shell. Calls of one Thread are serialised;
 * different Threads' shells run side by side (the runner decides how many calls run at once).
 */
export class BashTool implements Tool {
  readonly name = 'bash';
  private readonly shells = new Map<string, ThreadShell>();
  private readonly dir: string;

  constructor(private readonly options: BashOptions) {
    this.dir = mkdtempSync(join(tmpdir(), 'mango-bash-'));
  }

  run(
    input: Record<string, unknown>,
    ctx: Pick<ToolRunContext, 'signal'> & Partial<ToolRunContext>,
  ): Promise<string> {
    const thread = ctx.toolUse?.session_thread_id ?? PRIMARY;
    let shell = this.shells.get(thread);
    if (!shell) {
      shell = new ThreadShell(this.options, this.dir);
      this.shells.set(thread, shell);
    }
    return shell.run(input, ctx.signal, ctx.toolUse?.id);
  }

  /** How many Threads have a shell (for tests and logs). */
  get threadCount(): number {
    return this.shells.size;
  }

  async close(): Promise<void> {
    await Promise.all([...this.shells.values()].map((s) => s.kill()));
    this.shells.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * One Thread's shell. Each command is sourced from a private file (`. FILE </dev/null >OUT 2>ERR`),
 * framed on the PTY by per-call random begin/end markers that carry `$?`; the result is stdout then
 * stderr, cut at the output limit with the whole output spilled to `<workdir>/.mango/bash-output/`. A
 * timeout or a cancellation kills the whole PTY session (background jobs included), after which the shell
 * **refuses calls until one passes `restart`**. Shell death or corrupt framing kills it too; the next call
 * then starts a fresh shell. The shell environment has Mango credentials scrubbed.
 */
class ThreadShell {
  private shell?: Shell;
  private queue: Promise<unknown> = Promise.resolve();
  /** Set when a timeout or cancellation killed the shell: what the refusal says until a restart. */
  private killedBy?: string;

  constructor(
    private readonly options: BashOptions,
    private readonly dir: string,
  ) {}

  run(input: Record<string, unknown>, signal: AbortSignal, callId?: string): Promise<string> {
    const next = this.queue.then(() => this.call(input, signal, callId));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async call(input: Record<string, unknown>, signal: AbortSignal, callId?: string): Promise<string> {
    const command = typeof input.command === 'string' ? input.command : undefined;
    if (input.restart === true) {
      await this.kill();
      this.killedBy = undefined;
      if (!command) return 'bash session restarted';
    }
    if (!command) throw new ToolError('bash: command is required');
    if (this.killedBy)
      throw new ToolError(
        `bash: the shell was killed after ${this.killedBy}; it runs no command until a call passes restart: true`,
      );
    const timeoutMs =
      typeof input.timeout_ms === 'number' && input.timeout_ms > 0
        ? Math.floor(input.timeout_ms)
        : (this.options.defaultTimeoutMs ?? BASH_DEFAULT_TIMEOUT_MS);
    if (signal.aborted) throw new ToolError('bash: cancelled');
    const shell = this.shell && !this.shell.dead ? this.shell : this.start();
    const nonce = randomBytes(12).toString('hex');
    const file = join(this.dir, `cmd-${nonce}.sh`);
    // stdout and stderr are written where a cut output is spilled, in the workspace: a large output must
    // not fill the container's small /tmp, and the spill is then a rename.
    const capture = await this.captureDir();
    const out = join(capture, `.out-${nonce}`);
    const err = join(capture, `.err-${nonce}`);
    await writeFile(file, `{ ${command}\n}\n`, { mode: 0o600 });
    try {
      const code = await this.exchange(
        shell,
        nonce,
        `. '${file}' </dev/null >'${out}' 2>'${err}'`,
        timeoutMs,
        signal,
      );
      const output = await this.output(out, err, capture, callId ?? nonce);
      if (code !== 0) throw new ToolError(output || `exit ${code}`);
      return output;
    } finally {
      await Promise.all([file, out, err].map((f) => rm(f, { force: true }).catch(() => undefined)));
    }
  }

  /**
   * stdout then stderr, ANSI sequences stripped and trailing newlines trimmed. Over the limit: the first
   * `limit` characters and a line naming the file in the workspace that holds the whole output.
   */
  private async output(out: string, err: string, dir: string, callId: string): Promise<string> {
    const limit = this.options.outputLimitChars ?? BASH_OUTPUT_LIMIT_CHARS;
    // At most 4 bytes a character (plus a partial one): enough to tell whether the limit is passed.
    const headBytes = limit * 4 + 4;
    const [o, e] = await Promise.all([head(out, headBytes), head(err, headBytes)]);
    const sep = o.size && e.size && !o.endsWithNewline ? '\n' : '';
    const text = clean(o.text + sep + e.text);
    if (text.length <= limit && o.whole && e.whole) return text;
    const total = o.size + sep.length + e.size;
    const where = await this.spill(out, err, sep, dir, callId).then(
      (spill) => `is in ${spill}; read it with the read tool (view_range for large files)`,
      (cause: unknown) => `could not be kept (${(cause as Error)?.message ?? String(cause)})`,
    );
    return `${text.slice(0, limit)}\n[output cut at ${limit} characters: the whole output (${total} bytes, stdout then stderr) ${where}]`;
  }

  /** The whole output, stdout then stderr, in `<workdir>/.mango/bash-output/<call id>.txt`. */
  private async spill(out: string, err: string, sep: string, dir: string, callId: string): Promise<string> {
    const path = join(dir, `${callId.replace(/[^A-Za-z0-9_-]/g, '_')}.txt`);
    await rename(out, path);
    const sink = createWriteStream(path, { flags: 'a' });
    if (sep) sink.write(sep);
    await pipeline(createReadStream(err), sink);
    return path;
  }

  /**
   * `<workdir>/.mango/bash-output`, created when missing; the runner's private directory if the workspace
   * refuses it (e.g. a command replaced `.mango` with a file): the call still runs, its spill is then
   * outside the workspace.
   */
  private async captureDir(): Promise<string> {
    const dir = join(this.options.workdir, BASH_SPILL_DIR);
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      return dir;
    } catch {
      return this.dir;
    }
  }

  /** Runs the command file; resolves its exit status once the end marker arrives. */
  private exchange(
    shell: Shell,
    nonce: string,
    source: string,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<number> {
    const begin = `MANGOB_${nonce}`;
    const end = new RegExp(`MANGOE_${nonce}:(-?\\d+)\\r?\\n`);
    return new Promise((resolve, reject) => {
      let acc = '';
      let started = false;
      const fail = (message: string, refuseUntilRestart?: string) => {
        cleanup();
        if (refuseUntilRestart) this.killedBy = refuseUntilRestart;
        void this.kill().then(() => reject(new ToolError(message)));
      };
      const timer = setTimeout(
        () => fail(`bash: bash command timed out after ${timeoutMs}ms`, `a timeout (${timeoutMs}ms)`),
        timeoutMs,
      );
      const onAbort = () => fail('bash: cancelled', 'a cancellation');
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
      // Only the markers (and whatever a command writes to /dev/tty) reach the PTY: stdout and stderr go
      // to the call's files.
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
          acc = acc.slice(-4096);
          if (acc.includes(begin)) fail('bash: corrupt completion framing');
          return;
        }
        cleanup();
        resolve(Number(m[1]));
      };
      shell.pty.write(
        ` printf '%s_%s\\n' MANGOB ${nonce}; ${source}; printf '%s_%s:%s\\n' MANGOE ${nonce} "$?"\n`,
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
  async kill(): Promise<void> {
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
}

/**
 * The first `bytes` of a file as UTF-8 (a cut character dropped), its size, whether that was all of it,
 * and whether its last byte is a newline.
 */
async function head(
  path: string,
  bytes: number,
): Promise<{ text: string; size: number; whole: boolean; endsWithNewline: boolean }> {
  const fh = await open(path, 'r').catch(() => undefined);
  if (!fh) return { text: '', size: 0, whole: true, endsWithNewline: false };
  try {
    const { size } = await stat(path);
    const buf = Buffer.alloc(Math.min(size, bytes));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const whole = bytesRead >= size;
    let text = buf.subarray(0, bytesRead).toString('utf8');
    if (!whole) text = text.replace(/\ufffd$/, '');
    const last = Buffer.alloc(1);
    if (size) await fh.read(last, 0, 1, size - 1);
    return { text, size, whole, endsWithNewline: size > 0 && last[0] === 0x0a };
  } finally {
    await fh.close();
  }
}

/** Terminal control sequences stripped, carriage returns folded, trailing newlines trimmed. */
function clean(text: string): string {
  return stripVTControlCharacters(text.replace(/\r+\n/g, '\n').replace(/\r/g, '')).replace(/\n+$/, '');
}
