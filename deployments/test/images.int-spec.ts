import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createEmptyDatabase, TestDatabase } from '@mango/testing';

/**
 * Mango's two images as tools/docker/build-images.sh builds them from deployments/docker/*.Dockerfile — the
 * build CI, the Compose test and tools/release/images.sh run — checked for what a platform team relies on:
 * the control plane runs as a numeric non-root user (Kubernetes' runAsNonRoot), carries the OCI labels, has
 * no compiler, and migrates and serves /readyz on a read-only root filesystem with only /tmp writable, no
 * capability and no privilege escalation; the sandbox declares a precompiled item runner that loads there.
 */
const ROOT = join(__dirname, '../..');
const VERSION: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;

function sh(cmd: string, args: string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { cwd: ROOT, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err)
          reject(
            new Error(
              `${cmd} ${args.join(' ')}: ${err.message}\n${stdout.slice(-4000)}${stderr.slice(-8000)}`,
            ),
          );
        else resolve(stdout);
      },
    );
  });
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

interface ImageInfo {
  Id: string;
  Config: { User: string; Env: string[]; Labels: Record<string, string>; Entrypoint: string[] | null };
}
const inspect = async (image: string): Promise<ImageInfo> =>
  JSON.parse(await sh('docker', ['image', 'inspect', image]))[0];

/** The hardened run every production orchestrator gives the control plane (the Helm chart's pod security). */
const HARDENED = [
  '--read-only',
  '--tmpfs',
  '/tmp:rw,exec,nosuid,nodev',
  '--cap-drop',
  'ALL',
  '--security-opt',
  'no-new-privileges',
  '--network',
  'host',
];

/** Polls until `GET url` answers 200; the container's logs in the error otherwise. */
async function untilReady(url: string, container: string): Promise<void> {
  for (let i = 0; i < 240; i++) {
    const ok = await fetch(url).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    const state = (await sh('docker', ['inspect', '-f', '{{.State.Status}}', container])).trim();
    if (state !== 'running')
      throw new Error(`${container} ${state}: ${await sh('docker', ['logs', container]).catch(String)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} never answered 200: ${await sh('docker', ['logs', container]).catch(String)}`);
}

describe('the images (deployments/docker, built by tools/docker/build-images.sh)', () => {
  let controlPlane: string;
  let sandbox: string;
  let db: TestDatabase | undefined;
  const containers: string[] = [];

  beforeAll(async () => {
    const out = await sh('bash', [join(ROOT, 'tools/docker/build-images.sh'), 'all'], 1_500_000);
    const vars = Object.fromEntries(
      out
        .split('\n')
        .filter((l) => /^MANGO_[A-Z_]+=\S+$/.test(l))
        .map((l) => l.split('=', 2) as [string, string]),
    );
    controlPlane = vars.MANGO_CONTROL_PLANE_IMAGE!;
    sandbox = vars.MANGO_SANDBOX_IMAGE!;
    if (!controlPlane || !sandbox) throw new Error(`build-images.sh printed ${out}`);
  }, 1_600_000);

  afterAll(async () => {
    if (containers.length) await sh('docker', ['rm', '-f', ...containers]).catch(() => undefined);
    await db?.drop();
  }, 120_000);

  describe('mango-control-plane', () => {
    it('is tagged with the package version and runs as a numeric non-root user (runAsNonRoot)', async () => {
      const info = await inspect(controlPlane);
      expect((await inspect(`mango-control-plane:${VERSION}`)).Id).toBe(info.Id);
      expect(info.Config.User).toMatch(/^\d+:\d+$/);
      expect(Number(info.Config.User.split(':')[0])).toBeGreaterThanOrEqual(10000);
      expect(info.Config.Env).toContain(`MANGO_WORKER_IMAGE=mango-sandbox:${VERSION}`);
    });

    it('carries the OCI labels: title, version, revision, source and licenses', async () => {
      const labels = (await inspect(controlPlane)).Config.Labels;
      expect(labels).toMatchObject({
        'org.opencontainers.image.title': 'mango-control-plane',
        'org.opencontainers.image.version': VERSION,
        'org.opencontainers.image.licenses': 'Apache-2.0',
      });
      expect(labels['org.opencontainers.image.revision']).toMatch(/^[0-9a-f]{40}(-dirty)?$/);
      expect(labels['org.opencontainers.image.source']).toBeTruthy();
    });

    it('has no compiler, assembler, linker or make', async () => {
      const found = await sh('docker', [
        'run',
        '--rm',
        '--network',
        'none',
        controlPlane,
        'bash',
        '-c',
        'for b in gcc cc c++ g++ clang tcc as ld make; do command -v "$b" || true; done',
      ]);
      expect(found.trim()).toBe('');
    });

    it('migrates and serves /readyz from api and files on a read-only root, /tmp its only writable place', async () => {
      db = await createEmptyDatabase('images');
      const migrated = await sh('docker', [
        'run',
        '--rm',
        ...HARDENED,
        '-e',
        `MANGO_DATABASE_URL=${db.url}`,
        controlPlane,
        'mango',
        'migrate',
      ]);
      expect(migrated).toMatch(/applied \d+ migration\(s\)/);
      const apiPort = await freePort();
      const filesPort = await freePort();
      const name = `mango-images-${process.pid}`;
      const run = async (role: string, env: Record<string, string>) => {
        containers.push(`${name}-${role}`);
        await sh('docker', [
          'run',
          '-d',
          '--name',
          `${name}-${role}`,
          ...HARDENED,
          ...Object.entries({ MANGO_DATABASE_URL: db!.url, ...env }).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
          controlPlane,
          'mango-server',
          role,
        ]);
      };
      await run('api', {
        MANGO_API_HOST: '127.0.0.1',
        MANGO_API_PORT: String(apiPort),
        MANGO_PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`,
      });
      await run('files', {
        MANGO_FILES_HOST: '127.0.0.1',
        MANGO_FILES_PORT: String(filesPort),
        MANGO_S3_ENDPOINT: process.env.MANGO_S3_ENDPOINT!,
        MANGO_S3_ACCESS_KEY: process.env.MANGO_S3_ACCESS_KEY!,
        MANGO_S3_SECRET_KEY: process.env.MANGO_S3_SECRET_KEY!,
        MANGO_S3_BUCKET: `mango-images-${process.pid}`,
      });
      await untilReady(`http://127.0.0.1:${apiPort}/readyz`, `${name}-api`);
      await untilReady(`http://127.0.0.1:${filesPort}/readyz`, `${name}-files`);
      // The console's bundle is in the image: apps/api serves it.
      expect((await fetch(`http://127.0.0.1:${apiPort}/console/`)).status).toBe(200);
      for (const role of ['api', 'files'])
        expect(
          (
            await sh('docker', [
              'inspect',
              '-f',
              '{{.HostConfig.ReadonlyRootfs}} {{.Config.User}}',
              `${name}-${role}`,
            ])
          ).trim(),
        ).toBe('true 10001:10001');
    }, 300_000);
  });

  describe('mango-sandbox', () => {
    it('is tagged with the package version, runs as uid 1000 and carries the OCI labels', async () => {
      const info = await inspect(sandbox);
      expect((await inspect(`mango-sandbox:${VERSION}`)).Id).toBe(info.Id);
      expect(info.Config.User).toBe('1000:1000');
      expect(info.Config.Labels).toMatchObject({
        'org.opencontainers.image.title': 'mango-sandbox',
        'org.opencontainers.image.version': VERSION,
        'org.opencontainers.image.licenses': 'Apache-2.0',
      });
    });

    it('declares a precompiled item runner that loads on a read-only root (exit 2 naming MANGO_WORK_ID, as without its Work)', async () => {
      const entry = (await inspect(sandbox)).Config.Env.find((e) => e.startsWith('MANGO_ITEM_ENTRY='));
      expect(entry).toBe('MANGO_ITEM_ENTRY=/opt/mango/dist/item-runner/current/item-runner.js');
      const run = await sh('docker', [
        'run',
        '--rm',
        '--read-only',
        '--tmpfs',
        '/tmp:rw,exec,nosuid,nodev',
        '--network',
        'none',
        '--cap-drop',
        'ALL',
        sandbox,
        'bash',
        '-c',
        'node "$MANGO_ITEM_ENTRY" 2>&1; echo "exit=$?"; node -e "require(\'/opt/mango/node_modules/koffi\'); require(\'/opt/mango/node_modules/@lydell/node-pty\'); console.log(\'native ok\')"',
      ]).catch((e: Error) => e.message);
      expect(run).toMatch(/MANGO_WORK_ID/);
      expect(run).toContain('exit=2');
      expect(run).toContain('native ok');
    });
  });
});
