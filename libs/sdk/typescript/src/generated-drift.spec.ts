import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

describe('src/generated', () => {
  it('is what tools/sdk/generate.sh makes from openapi.yaml (run it and commit when this fails)', () => {
    const root = join(__dirname, '../../../..');
    let output = '';
    try {
      output = execFileSync('bash', ['tools/sdk/generate.sh', '--check', 'typescript'], {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`drift:\n${e.stderr ?? ''}${e.stdout ?? ''}`);
    }
    expect(output).toBe('');
  }, 120_000);
});
