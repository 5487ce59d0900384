import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BashTool } from './bash';
import { Confinement } from './confine';
import { readTool } from './read';
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

  it('keeps cwd and environment across calls; the result is stdout then stderr, not interleaved', async () => {
    expect(await run({ command: 'mkdir sub && cd sub && export GREETING=hi' })).toBe('');
    expect(await run({ command: 'pwd; echo oops >&2; echo $GREETING' })).toBe(`${dir}/sub\nhi\noops`);
    expect(await run({ command: 'echo -n out; echo err >&2' })).toBe('out\nerr');
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

  it('after a timeout_ms the shell and its children are killed and every call is refused until restart', async () => {
    await run({ command: 'cd / && export X=1' });
    const marker = join(dir, 'child-survived');
    expect(await fails({ command: `(sleep 2; touch ${marker}) & sleep 30`, timeout_ms: 300 })).toBe(
      'bash: bash command timed out after 300ms',
    );
    const refusal = await fails({ command: 'echo never' });
    expect(refusal).toMatch(/killed after a timeout \(300ms\).*restart: true/);
    expect(await fails({ command: 'echo still never' })).toBe(refusal);
    expect(await run({ restart: true, command: 'pwd; echo "[$X]"' })).toBe(`${dir}\n[]`);
    expect(await run({ command: 'echo back' })).toBe('back');
    await new Promise((r) => setTimeout(r, 2500));
    expect(existsSync(marker)).toBe(false);
  }, 15_000);

  it('without timeout_ms a command gets the tool default (a parameter; the contract default is pinned in worker-contract.spec)', async () => {
    const short = new BashTool({ workdir: dir, defaultTimeoutMs: 300 });
    try {
      await expect(short.run({ command: 'sleep 30' }, { signal: signal() })).rejects.toThrow(
        'bash: bash command timed out after 300ms',
      );
    } finally {
      await short.close();
    }
  });

  it('a cancellation kills the shell; calls are refused until one passes restart', async () => {
    await run({ command: 'export Y=2' });
    const ac = new AbortController();
    const pending = fails({ command: 'sleep 30' }, ac.signal);
    setTimeout(() => ac.abort(), 200);
    expect(await pending).toBe('bash: cancelled');
    expect(await fails({ command: 'echo "[$Y]"' })).toMatch(/killed after a cancellation.*restart: true/);
    expect(await run({ restart: true })).toBe('bash session restarted');
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

  it('cuts stdout-then-stderr at the output limit and names a workspace file with the whole output, readable with read', async () => {
    const small = new BashTool({ workdir: dir, outputLimitChars: 100 });
    const toolUse = { id: 'sevt_cut1', name: 'bash', input: {} };
    try {
      const out = await small.run(
        { command: 'for i in $(seq 1 3000); do echo "line $i"; done; echo tail-of-stderr >&2' },
        { signal: signal(), toolUse },
      );
      const [shown, note] = [out.slice(0, 100), out.slice(100)];
      expect(shown).toBe(
        Array.from({ length: 20 }, (_, i) => `line ${i + 1}`)
          .join('\n')
          .slice(0, 100),
      );
      const spill = join(dir, '.mango/bash-output/sevt_cut1.txt');
      expect(note).toContain(`[output cut at 100 characters: the whole output`);
      expect(note).toContain(spill);
      const whole = readFileSync(spill, 'utf8');
      expect(whole.startsWith('line 1\nline 2\n')).toBe(true);
      expect(whole.slice(-25)).toBe('line 3000\ntail-of-stderr\n');
      const read = readTool(new Confinement(dir, []));
      expect(
        await read.run({ file_path: spill, view_range: [3001, 3001] }, { signal: signal(), toolUse }),
      ).toBe('tail-of-stderr');
      // Under the limit: no file, nothing cut.
      expect(
        await small.run(
          { command: 'echo short' },
          { signal: signal(), toolUse: { ...toolUse, id: 'sevt_2' } },
        ),
      ).toBe('short');
      expect(existsSync(join(dir, '.mango/bash-output/sevt_2.txt'))).toBe(false);
      // Each call's stdout and stderr files are gone; only the spill stays.
      expect(readdirSync(join(dir, '.mango/bash-output'))).toEqual(['sevt_cut1.txt']);
    } finally {
      await small.close();
    }
  });

  it('runs when the workspace refuses the capture directory (a command replaced .mango with a file)', async () => {
    await run({ command: 'rm -rf .mango && echo x > .mango' });
    expect(await run({ command: 'echo still runs; echo e >&2' })).toBe('still runs\ne');
    expect(readFileSync(join(dir, '.mango'), 'utf8')).toBe('x\n');
  });

  it('a Thread has its own shell: cwd, environment and a timeout refusal stay in it', async () => {
    const primary = { id: 'sevt_p', name: 'bash', input: {} };
    const child = { ...primary, id: 'sevt_c', session_thread_id: 'sthr_child' };
    const inThread = (toolUse: typeof primary, input: Record<string, unknown>) =>
      bash.run(input, { signal: signal(), toolUse });
    await inThread(primary, { command: 'mkdir -p p && cd p && export WHO=primary' });
    expect(await inThread(child, { command: 'pwd; echo "[$WHO]"' })).toBe(`${dir}\n[]`);
    await expect(inThread(child, { command: 'sleep 30', timeout_ms: 200 })).rejects.toThrow(/timed out/);
    await expect(inThread(child, { command: 'echo x' })).rejects.toThrow(/restart: true/);
    expect(await inThread(primary, { command: 'pwd; echo "[$WHO]"' })).toBe(`${dir}/p\n[primary]`);
    expect(bash.threadCount).toBe(2);
  });

  it('strips ANSI sequences and serialises concurrent calls of one Thread', async () => {
    expect(await run({ command: "printf '\\033[31mred\\033[0m'" })).toBe('red');
    const [a, b] = await Promise.all([run({ command: 'sleep 0.2; echo a' }), run({ command: 'echo b' })]);
    expect([a, b]).toEqual(['a', 'b']);
  });
});
