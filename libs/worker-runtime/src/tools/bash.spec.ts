import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BashTool } from './bash';
import { ToolError } from './types';

/** The persistent PTY shell on the real /bin/bash. */
describe('bash tool', () => {
  let dir: string;
  let bash: BashTool;
  const signal = () => new AbortController().signal;
  const run = (input: Record<string, unknown>, s = signal()) => bash.run(input, { signal: s });
  const fails = (input: Record<string, unknown>, s = signal()) =>
    run(input, s).then(
      (ok) => {
        throw new Error(`expected a failure, got ${ok}`);
      },
      (e: Error) => {
        if (!(e instanceof ToolError)) throw e;
        return e.message;
      },
    );

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bash-'));
    bash = new BashTool({
      workdir: dir,
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        MANGO_WORK_TOKEN: 'mango_wt_secret',
        ANTHROPIC_API_KEY: 'k',
        GITHUB_TOKEN: 't',
        KEEP: 'kept',
      },
    });
  });
  afterEach(async () => {
    await bash.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps cwd and environment across calls; merges stderr; runs on a PTY', async () => {
    expect(await run({ command: 'mkdir sub && cd sub && export GREETING=hi' })).toBe('');
    expect(await run({ command: 'pwd; echo $GREETING; echo oops >&2' })).toBe(`${dir}/sub\nhi\noops`);
    expect(await run({ command: 'test -t 1 && echo tty' })).toBe('tty');
    expect(await run({ command: 'printf "no newline"' })).toBe('no newline');
  });

  it('scrubs Mango and other credentials from the shell environment', async () => {
    expect(await run({ command: 'env | sort' })).not.toMatch(/MANGO_|ANTHROPIC_|GITHUB_TOKEN|mango_wt_/);
    expect(await run({ command: 'echo $KEEP' })).toBe('kept');
  });

  it.each([
    [{ command: 'exit_code() { return 3; }; exit_code' }, 'exit 3'],
    [{ command: 'echo bad; false' }, 'bad'],
    [{}, 'bash: command is required'],
    [{ command: 'echo "unbalanced' }, /unexpected EOF/],
  ])('%j fails with its output', async (input, message) => {
    expect(await fails(input)).toEqual(
      typeof message === 'string' ? message : expect.stringMatching(message),
    );
    expect(await run({ command: 'echo still alive' })).toBe('still alive');
  });

  it('timeout_ms kills the shell and its children; the next call gets a fresh shell', async () => {
    await run({ command: 'cd / && export X=1' });
    const marker = join(dir, 'child-survived');
    expect(await fails({ command: `(sleep 2; touch ${marker}) & sleep 30`, timeout_ms: 300 })).toBe(
      'bash: bash command timed out after 300ms',
    );
    expect(await run({ command: 'pwd; echo "[$X]"' })).toBe(`${dir}\n[]`);
    await new Promise((r) => setTimeout(r, 2500));
    expect(existsSync(marker)).toBe(false);
  }, 15_000);

  it('cancellation closes the shell before the next call', async () => {
    await run({ command: 'export Y=2' });
    const ac = new AbortController();
    const pending = fails({ command: 'sleep 30' }, ac.signal);
    setTimeout(() => ac.abort(), 200);
    expect(await pending).toBe('bash: cancelled');
    expect(await run({ command: 'echo "[$Y]"' })).toBe('[]');
  });

  it('shell exit is reported and the next call starts fresh', async () => {
    expect(await fails({ command: 'exit 4' })).toBe('bash: bash session terminated');
    expect(await run({ command: 'echo back' })).toBe('back');
  });

  it('restart discards state; restart with a command runs it in the fresh shell', async () => {
    await run({ command: 'export Z=3' });
    expect(await run({ restart: true })).toBe('bash session restarted');
    expect(await run({ command: 'echo "[$Z]"' })).toBe('[]');
    await run({ command: 'export Z=4' });
    expect(await run({ restart: true, command: 'echo "[$Z]"' })).toBe('[]');
  });

  it('keeps the tail of long output, strips ANSI sequences, and serialises concurrent calls', async () => {
    const out = await run({ command: 'for i in $(seq 1 30000); do echo "line $i"; done' });
    expect(out.startsWith('[output truncated]\n')).toBe(true);
    expect(out.endsWith('line 30000')).toBe(true);
    expect(out.length).toBeLessThanOrEqual(102_400 + 19);
    expect(await run({ command: "printf '\\033[31mred\\033[0m'" })).toBe('red');
    const [a, b] = await Promise.all([run({ command: 'sleep 0.2; echo a' }), run({ command: 'echo b' })]);
    expect([a, b]).toEqual(['a', 'b']);
  });
});
