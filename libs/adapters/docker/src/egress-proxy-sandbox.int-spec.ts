import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { parseAllowEntries } from '@mango/domain-kernel';
import type { SandboxNetworking } from '@mango/domain-egress';
import { createDockerClient } from './docker-engine';
import { egressProxyEnv, type EgressRecord, openEgressSocket, type EgressSocket } from './egress-proxy';
import { SANDBOX_SOCKET_DIR } from './work-api-socket';

/**
 * Issue #41 from a real sandbox: a sealed container (`NetworkMode: none`, non-root, read-only root) with
 * its socket directory bind-mounted, the item runner's forwarder (libs/worker-runtime egress-forwarder.ts,
 * run from this checkout) on 127.0.0.1:3128, and the proxy variables set. Real clients — curl, git, pip —
 * reach local test servers on the host's loopback only through the supervisor-side proxy in this process,
 * whose resolver maps the `.test` names to 127.0.0.1. Nothing here connects to a non-loopback address.
 */

const ROOT = join(__dirname, '../../../..');
const FORWARDER = `require('/opt/mango/libs/worker-runtime/src/egress-forwarder.ts')
  .startEgressForwarder({ socketPath: '/run/mango/egress.sock', port: 3128 })
  .then(() => { console.log('forwarder ready'); setInterval(() => {}, 1 << 30); });`;

/** A static file server (the dumb Git protocol and a PEP 503 simple index need nothing more). */
function serveDir(root: string, hits: string[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = normalize(decodeURIComponent((req.url ?? '/').split('?')[0]!));
    hits.push(`${req.method} ${req.url} host=${req.headers.host}`);
    let file = join(root, path);
    if (path.endsWith('/')) file = join(file, 'index.html');
    try {
      const body = readFileSync(file);
      const type = extname(file) === '.html' ? 'text/html' : 'application/octet-stream';
      res.writeHead(200, { 'content-type': type, 'content-length': body.length });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  };
}

/** A one-file wheel (`py3-none-any`): pip downloads it without building anything. */
function writeWheel(dir: string): string {
  const name = 'mango_egress_probe-1.0-py3-none-any.whl';
  execFileSync('python3', [
    '-c',
    `import zipfile,sys
z=zipfile.ZipFile(sys.argv[1],'w')
z.writestr('mango_egress_probe/__init__.py','')
z.writestr('mango_egress_probe-1.0.dist-info/METADATA','Metadata-Version: 2.1\\nName: mango-egress-probe\\nVersion: 1.0\\n')
z.writestr('mango_egress_probe-1.0.dist-info/WHEEL','Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')
z.writestr('mango_egress_probe-1.0.dist-info/RECORD','')
z.close()`,
    join(dir, name),
  ]);
  return name;
}

describe('sandbox egress from a real container through the supervisor-side proxy (curl, git, pip)', () => {
  const docker = createDockerClient(process.env.DOCKER_HOST, { timeoutMs: 0 });
  let work: string;
  let socketDir: string;
  let certDir: string;
  let egress: EgressSocket;
  let container: Docker.Container;
  let plain: Server;
  let tls: Server;
  let controlPlane: Server;
  const records: EgressRecord[] = [];
  const plainHits: string[] = [];
  const tlsHits: string[] = [];
  let controlPlaneHits = 0;
  const port = (s: Server) => (s.address() as AddressInfo).port;

  /** A shell command in the container as the sandbox user; its exit code and output. */
  async function sh(command: string): Promise<{ code: number; out: string }> {
    const exec = await container.exec({
      Cmd: ['bash', '-c', command],
      AttachStdout: true,
      AttachStderr: true,
      User: '1000:1000',
    });
    const stream = await exec.start({});
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (b: Buffer) => chunks.push(b));
    docker.modem.demuxStream(stream, out, out);
    await new Promise<void>((resolve) => {
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', () => resolve());
    });
    const { ExitCode } = await exec.inspect();
    return { code: ExitCode ?? -1, out: Buffer.concat(chunks).toString('utf8') };
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'mango-egress-sandbox-'));
    socketDir = join(work, 'socket');
    certDir = join(work, 'certs');
    const site = join(work, 'site');
    for (const d of [socketDir, certDir, site, join(site, 'simple', 'mango-egress-probe')])
      mkdirSync(d, { recursive: true, mode: 0o755 });
    // A bare repository served by the dumb HTTP protocol, over TLS.
    const src = join(work, 'src');
    execFileSync('git', ['init', '-q', '-b', 'main', src]);
    writeFileSync(join(src, 'README.md'), 'cloned through the egress proxy\n');
    execFileSync('git', ['-C', src, 'add', '.']);
    execFileSync('git', ['-C', src, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one']);
    execFileSync('git', ['clone', '-q', '--bare', src, join(site, 'repo.git')]);
    execFileSync('git', ['-C', join(site, 'repo.git'), 'update-server-info']);
    // A PEP 503 index with one wheel.
    const wheel = writeWheel(join(site, 'simple', 'mango-egress-probe'));
    writeFileSync(
      join(site, 'simple', 'mango-egress-probe', 'index.html'),
      `<a href="${wheel}">${wheel}</a>\n`,
    );
    // The TLS server's certificate, for the name the sandbox asks for (trusted by the clients below).
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=git.allowed.test',
        '-addext',
        'subjectAltName=DNS:git.allowed.test',
        '-keyout',
        join(certDir, 'key.pem'),
        '-out',
        join(certDir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    execFileSync('chmod', ['-R', 'a+rX', work]);

    plain = createServer(serveDir(site, plainHits));
    tls = createHttpsServer(
      { key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) },
      serveDir(site, tlsHits),
    );
    controlPlane = createServer((_q, r) => {
      controlPlaneHits++;
      r.end('control plane');
    });
    for (const s of [plain, tls, controlPlane]) await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));

    const networking: SandboxNetworking = {
      type: 'limited',
      allowed_hosts: [
        `allowed.test:${port(plain)}`,
        `*.allowed.test:${port(tls)}`,
        `cp.test:${port(controlPlane)}`,
        `127.0.0.1:${port(controlPlane)}`,
      ],
      allow_package_managers: false,
      allow_mcp_servers: false,
    };
    egress = await openEgressSocket(socketDir, {
      context: {
        networking,
        unrestrictedEnabled: false,
        mcpServers: [],
        allowedAddresses: parseAllowEntries('127.0.0.1'),
        controlPlane: { addresses: ['127.0.0.1'], port: port(controlPlane) },
      },
      // The test resolver: every `.test` name is the host's loopback (where only the servers above listen).
      resolve: async (host) => (host.endsWith('.test') ? [{ address: '127.0.0.1', family: 4 }] : []),
      onRecord: (r) => records.push(r),
    });
    container = await docker.createContainer({
      name: `mango-egress-sandbox-${process.pid}`,
      Image: process.env.MANGO_BASE_IMAGE!,
      Entrypoint: ['node'],
      Cmd: ['-r', '/opt/mango/tools/runtime/register.js', '-e', FORWARDER],
      User: '1000:1000',
      Env: ['HOME=/tmp', 'PATH=/usr/local/bin:/usr/bin:/bin', ...egressProxyEnv()],
      WorkingDir: '/tmp',
      HostConfig: {
        NetworkMode: 'none',
        ReadonlyRootfs: true,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        Tmpfs: { '/tmp': 'rw,exec,nosuid,nodev,size=64m,uid=1000,gid=1000' },
        Binds: [`${socketDir}:${SANDBOX_SOCKET_DIR}:ro`, `${ROOT}:/opt/mango:ro`, `${certDir}:/certs:ro`],
      },
    });
    await container.start();
    // The forwarder is up once its port accepts (bash's /dev/tcp; no network beyond the loopback).
    const up = await sh(
      'for i in $(seq 1 600); do (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null && exit 0; sleep 0.1; done; exit 1',
    );
    if (up.code !== 0)
      throw new Error(
        `the forwarder did not start: ${(await container.logs({ stdout: true, stderr: true })).toString()}`,
      );
  }, 180_000);

  afterAll(async () => {
    await container?.remove({ force: true }).catch(() => undefined);
    await egress?.close();
    for (const s of [plain, tls, controlPlane]) {
      s?.closeAllConnections();
      await new Promise((r) => (s ? s.close(r) : r(undefined)));
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('the sandbox has no route of its own: without the proxy, the host loopback servers are unreachable', async () => {
    const direct = await sh(`curl -sS --noproxy '*' -m 5 http://127.0.0.1:${port(plain)}/simple/ 2>&1`);
    expect(direct.code).not.toBe(0);
    expect(plainHits).toEqual([]);
  });

  it('curl through the proxy variables reaches an allowed host (plain HTTP and a CONNECT tunnel)', async () => {
    const viaHttp = await sh(`curl -sS -m 20 http://allowed.test:${port(plain)}/simple/mango-egress-probe/`);
    expect(viaHttp).toEqual({
      code: 0,
      out: expect.stringContaining('mango_egress_probe-1.0-py3-none-any.whl'),
    });
    const viaTunnel = await sh(
      `curl -sS -m 20 -p -o /dev/null -w '%{http_code}' http://allowed.test:${port(plain)}/simple/mango-egress-probe/`,
    );
    expect(viaTunnel).toEqual({ code: 0, out: '200' });
    expect(
      plainHits.filter((h) => h.includes(`host=allowed.test:${port(plain)}`)).length,
    ).toBeGreaterThanOrEqual(2);
  });

  it('a host the Environment does not allow is refused with its rule, over HTTP and CONNECT', async () => {
    const http = await sh(`curl -sS -m 20 -D - -o /dev/null http://refused.test:${port(plain)}/simple/`);
    expect(http.out).toMatch(/^HTTP\/1\.1 403/);
    expect(http.out).toMatch(/x-mango-egress-rule: host_not_allowed/i);
    const https = await sh(`curl -sS -m 20 https://refused.test:${port(tls)}/ 2>&1`);
    expect(https.code).toBe(56); // CONNECT answered 403
    expect(https.out).toMatch(/403/);
  });

  it("an allowed name that resolves to the control plane's port, and the control plane's address itself, are refused", async () => {
    const byName = await sh(
      `curl -sS -m 20 -D - -o /dev/null http://cp.test:${port(controlPlane)}/v1/sessions`,
    );
    expect(byName.out).toMatch(/x-mango-egress-rule: control_plane/i);
    const byAddress = await sh(
      `curl -sS -m 20 -D - -o /dev/null http://127.0.0.1:${port(controlPlane)}/v1/sessions --proxy http://127.0.0.1:3128 --noproxy ''`,
    );
    expect(byAddress.out).toMatch(/^HTTP\/1\.1 403/);
    expect(byAddress.out).toMatch(/x-mango-egress-rule: control_plane/i);
    expect(controlPlaneHits).toBe(0);
  });

  it('git clone over HTTPS through the proxy (tunnelled, verified against the server certificate)', async () => {
    const clone = await sh(
      `cd /tmp && GIT_SSL_CAINFO=/certs/cert.pem git clone -q https://git.allowed.test:${port(tls)}/repo.git cloned 2>&1 && cat cloned/README.md`,
    );
    expect(clone).toEqual({ code: 0, out: 'cloned through the egress proxy\n' });
    expect(tlsHits.some((h) => h.includes('/repo.git/info/refs'))).toBe(true);
  });

  it('pip download through the proxy from an allowed index', async () => {
    const pip = await sh(
      `cd /tmp && python3 -m pip download -q --no-deps --disable-pip-version-check -d /tmp/wheels --index-url http://allowed.test:${port(plain)}/simple/ --trusted-host allowed.test mango-egress-probe 2>&1 && ls /tmp/wheels`,
    );
    expect(pip).toEqual({ code: 0, out: 'mango_egress_probe-1.0-py3-none-any.whl\n' });
  });

  it('every connection was recorded: allowed ones with their bytes, refused ones with their rule', () => {
    const refused = records.filter((r) => !r.allowed).map((r) => `${r.host}:${r.rule}`);
    expect(refused).toEqual(
      expect.arrayContaining([
        'refused.test:host_not_allowed',
        'cp.test:control_plane',
        '127.0.0.1:control_plane',
      ]),
    );
    const allowed = records.filter((r) => r.allowed);
    expect(allowed.length).toBeGreaterThanOrEqual(4);
    // Bytes from the upstream for every allowed one; to it for tunnels (a plain GET has no body to count).
    expect(allowed.filter((r) => r.bytesIn === 0)).toEqual([]);
    expect(allowed.filter((r) => r.kind === 'connect' && r.bytesOut === 0)).toEqual([]);
    expect(allowed.map((r) => r.kind)).toEqual(expect.arrayContaining(['http', 'connect']));
  });
});
