import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '../../../..');

/** Runs a tiny app through runMain in a child process; `bootMs` is how long its start() takes. */
function app(bootMs: number) {
  const dir = mkdtempSync(join(tmpdir(), 'run-main-'));
  const script = join(dir, 'app.js');
  writeFileSync(
    script,
    // 'booting' is printed from start(), which runMain calls after installing its signal handlers: a
    // signal sent on seeing it can never find the process without them (printed before runMain, it raced).
    `const { runMain } = require(${JSON.stringify(join(__dirname, 'run-main.ts'))});
     runMain('test', () => new Promise((resolve) => {
       console.log('booting');
       setTimeout(() => {
         // An app that is up holds the event loop open (a real one has its server): without this the
         // child ended on its own right after 'up', and a SIGTERM landing during that exit killed it
         // (exit null under load).
         const alive = setInterval(() => {}, 60_000);
         console.log('up');
         resolve({ close: async () => { clearInterval(alive); console.log('closed'); } });
       }, ${bootMs});
     }));`,
  );
  const child = spawn(process.execPath, ['-r', join(ROOT, 'tools/runtime/register.js'), script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  // 'close', not 'exit': it comes after the child's stdout has been read to its end (one CI run's 'exit' came before the last line).
  // A death by signal resolves as the signal's name, so a failure says which.
  const exited = new Promise<number | string | null>((resolve) =>
    child.on('close', (code, signal) => resolve(code ?? signal)),
  );
  const until = async (text: string) => {
    while (!out.includes(text)) await new Promise((r) => setTimeout(r, 10));
  };
  return { child, exited, until, out: () => out };
}

describe('runMain signal handling', () => {
  it('a SIGTERM during boot is kept: the app closes as soon as it is up and exits 0', async () => {
    const a = app(800);
    await a.until('booting');
    a.child.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    expect(a.out()).toMatch(/up[\s\S]*closed/);
  }, 30_000);

  it('a SIGTERM after boot closes the app and exits 0', async () => {
    const a = app(0);
    await a.until('up');
    a.child.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    expect(a.out()).toContain('closed');
  }, 30_000);
});
