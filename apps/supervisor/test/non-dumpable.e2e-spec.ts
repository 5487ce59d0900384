import { join } from 'node:path';
import Docker from 'dockerode';

const ROOT = join(__dirname, '../../..');

/**
 * The worker's security boundary (docs/operator-guide.md, The Docker supervisor): before it reads the Work secret the item runner becomes non-dumpable, so
 * a same-uid Bash child (what the tools run) cannot read its /proc environment or memory. Checked in a
 * real hardened container on the real dockerd.
 */
describe('the item runner is non-dumpable (real dockerd)', () => {
  const docker = new Docker({ socketPath: new URL(process.env.DOCKER_HOST!).pathname });

  async function runInSandbox(script: string): Promise<{ code: number; output: string }> {
    const container = await docker.createContainer({
      Image: process.env.MANGO_BASE_IMAGE!,
      Cmd: ['node', '-r', '/opt/mango/tools/runtime/register.js', '-e', script],
      User: '1000:1000',
      Env: ['HOME=/tmp', 'RUNNER_SECRET=mango_wt_pretend-secret'],
      HostConfig: {
        NetworkMode: 'none',
        ReadonlyRootfs: true,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        Binds: [`${ROOT}:/opt/mango:ro`],
        Tmpfs: { '/tmp': 'rw,exec,nosuid,nodev,size=64m,uid=1000,gid=1000' },
      },
    });
    try {
      await container.start();
      const { StatusCode } = await container.wait();
      const logs = await container.logs({ stdout: true, stderr: true });
      return { code: StatusCode, output: logs.toString('utf8') };
    } finally {
      await container.remove({ force: true });
    }
  }

  const childReadsParent = `
    const { spawnSync } = require('node:child_process');
    const probe = () => spawnSync('/bin/bash', ['-c', 'cat /proc/$PPID/environ'], { encoding: 'utf8' });
    const before = probe();
    require('/opt/mango/libs/worker-runtime/src/non-dumpable.ts').makeNonDumpable();
    const after = probe();
    console.log(JSON.stringify({ before: before.stdout.includes('pretend-secret'), after: after.stdout.includes('pretend-secret'), afterErr: after.stderr }));
  `;

  it('a same-uid Bash child reads the parent environ before, and is refused after', async () => {
    const { code, output } = await runInSandbox(childReadsParent);
    expect(code).toBe(0);
    const line = JSON.parse(
      output
        .split('\n')
        .find((l) => l.includes('"before"'))!
        .replace(/^[^{]*/, ''),
    );
    expect(line.before).toBe(true);
    expect(line.after).toBe(false);
    expect(line.afterErr).toMatch(/Permission denied/);
  }, 60_000);
});
