import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllowEntries } from '@mango/domain-kernel';
import type { EgressContext, SandboxNetworking } from '@mango/domain-egress';
import { type EgressRecord, type EgressSocket, openEgressSocket, parseAuthority } from './egress-proxy';

/** Real servers on 127.0.0.1 and real clients over the proxy's unix socket; names resolve through a test map. */
describe('the egress proxy (CONNECT and plain HTTP, judged before any connection opens)', () => {
  let dir: string;
  let origin: Server;
  let originPort: number;
  let controlPlane: Server;
  let controlPort: number;
  const seen: Array<{ url: string; headers: Record<string, unknown> }> = [];
  let controlPlaneHits = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mango-egress-'));
    origin = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(`origin:${req.method}:${req.url}:${Buffer.concat(chunks).toString()}`));
    });
    controlPlane = createServer((_q, r) => {
      controlPlaneHits++;
      r.end('control plane');
    });
    await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => controlPlane.listen(0, '127.0.0.1', r));
    originPort = (origin.address() as AddressInfo).port;
    controlPort = (controlPlane.address() as AddressInfo).port;
  });
  afterAll(async () => {
    origin.closeAllConnections();
    controlPlane.closeAllConnections();
    await new Promise((r) => origin.close(r));
    await new Promise((r) => controlPlane.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const lookups: string[] = [];
  async function proxy(
    networking: SandboxNetworking | null,
    more: Partial<EgressContext> = {},
    limits = {},
  ): Promise<{ socket: EgressSocket; records: EgressRecord[]; next: () => Promise<EgressRecord> }> {
    const records: EgressRecord[] = [];
    const waiting: Array<(r: EgressRecord) => void> = [];
    const socket = await openEgressSocket(mkdtempSync(join(dir, 'c-')), {
      context: {
        networking,
        unrestrictedEnabled: false,
        mcpServers: [],
        allowedAddresses: parseAllowEntries('127.0.0.1'),
        controlPlane: { addresses: ['127.0.0.1'], port: controlPort },
        ...more,
      },
      resolve: async (host) => {
        lookups.push(host);
        return host.endsWith('.test') ? [{ address: '127.0.0.1', family: 4 }] : [];
      },
      limits,
      onRecord: (r) => {
        records.push(r);
        waiting.shift()?.(r);
      },
    });
    let taken = 0;
    return {
      socket,
      records,
      next: () =>
        records.length > taken
          ? Promise.resolve(records[taken++]!)
          : new Promise((r) => waiting.push((x) => (taken++, r(x)))),
    };
  }

  /** CONNECT over the socket; the proxy's answer head, and the tunnel when it is 200. */
  function connectVia(
    path: string,
    authority: string,
  ): Promise<{ head: string; send: (s: string) => Promise<string> }> {
    return new Promise((resolve, reject) => {
      const c = connect(path);
      let buf = '';
      c.on('error', reject);
      c.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
      const onData = (d: Buffer) => {
        buf += d.toString('latin1');
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        c.off('data', onData);
        const head = buf.slice(0, end);
        const rest = buf.slice(end + 4);
        resolve({
          head: head + (rest && !head.startsWith('HTTP/1.1 200') ? `\n\n${rest}` : ''),
          send: (s) =>
            new Promise((done) => {
              let got = '';
              c.on('data', (x: Buffer) => (got += x.toString('latin1')));
              c.on('close', () => done(got));
              c.write(s);
            }),
        });
      };
      c.on('data', onData);
    });
  }

  function getVia(
    path: string,
    url: string,
    body?: string,
  ): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
    return new Promise((resolve, reject) => {
      const q = request(
        {
          socketPath: path,
          path: url,
          method: body ? 'POST' : 'GET',
          headers: {
            host: url.startsWith('http') ? new URL(url).host : 'x',
            'proxy-authorization': 'Basic c2VjcmV0',
          },
        },
        (res) => {
          const cs: Buffer[] = [];
          res.on('data', (c: Buffer) => cs.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(cs).toString() }),
          );
        },
      );
      q.on('error', reject);
      q.end(body);
    });
  }

  it('parses CONNECT authorities strictly', () => {
    expect(parseAuthority('github.com:443')).toEqual({ host: 'github.com', port: 443 });
    expect(parseAuthority('[::1]:443')).toEqual({ host: '[::1]', port: 443 });
    for (const bad of [
      'github.com',
      'github.com:',
      ':443',
      'a b:443',
      'user@h:443',
      'h:443/x',
      '::1:443',
      'h:123456',
    ])
      expect(parseAuthority(bad)).toBeUndefined();
  });

  it('an allowed name is tunnelled to its judged address; bytes each way are recorded', async () => {
    const p = await proxy({
      type: 'limited',
      allowed_hosts: [`allowed.test:${originPort}`],
      allow_package_managers: false,
      allow_mcp_servers: false,
    });
    try {
      const t = await connectVia(p.socket.path, `allowed.test:${originPort}`);
      expect(t.head).toMatch(/^HTTP\/1\.1 200/);
      const answer = await t.send(
        'GET /tunnelled HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n',
      );
      expect(answer).toMatch(/origin:GET:\/tunnelled:/);
      const rec = await p.next();
      expect(rec).toMatchObject({ kind: 'connect', host: 'allowed.test', port: originPort, allowed: true });
      expect(rec.bytesOut).toBeGreaterThan(40);
      expect(rec.bytesIn).toBeGreaterThan(rec.bytesOut / 2);
    } finally {
      await p.socket.close();
    }
  });

  it('a name the policy does not allow is refused with its rule, and never looked up', async () => {
    const p = await proxy({
      type: 'limited',
      allowed_hosts: ['github.com'],
      allow_package_managers: false,
      allow_mcp_servers: false,
    });
    try {
      lookups.length = 0;
      const t = await connectVia(p.socket.path, `refused.test:${originPort}`);
      expect(t.head).toMatch(/^HTTP\/1\.1 403/);
      expect(t.head).toMatch(/x-mango-egress-rule: host_not_allowed/);
      expect(lookups).toEqual([]);
      expect(await p.next()).toMatchObject({
        allowed: false,
        rule: 'host_not_allowed',
        bytesOut: 0,
        bytesIn: 0,
      });
    } finally {
      await p.socket.close();
    }
  });

  it('no networking set: every connection is refused (no_egress)', async () => {
    const p = await proxy(null);
    try {
      expect((await connectVia(p.socket.path, `allowed.test:${originPort}`)).head).toMatch(
        /x-mango-egress-rule: no_egress/,
      );
      expect((await getVia(p.socket.path, `http://allowed.test:${originPort}/`)).status).toBe(403);
    } finally {
      await p.socket.close();
    }
  });

  it("an allowed name that resolves to the control plane's port is refused, allowlisted loopback or not; the control plane sees nothing", async () => {
    const p = await proxy(
      {
        type: 'limited',
        allowed_hosts: [`cp.test:${controlPort}`, `127.0.0.1:${controlPort}`],
        allow_package_managers: false,
        allow_mcp_servers: false,
      },
      { allowedAddresses: parseAllowEntries('127.0.0.0/8') },
    );
    try {
      const byName = await connectVia(p.socket.path, `cp.test:${controlPort}`);
      expect(byName.head).toMatch(/x-mango-egress-rule: control_plane/);
      const byAddress = await getVia(p.socket.path, `http://127.0.0.1:${controlPort}/v1/sessions`);
      expect([byAddress.status, byAddress.headers['x-mango-egress-rule']]).toEqual([403, 'control_plane']);
      expect(controlPlaneHits).toBe(0);
    } finally {
      await p.socket.close();
    }
  });

  it('loopback without the operator allowlist is refused even for an allowed name (loopback_address)', async () => {
    const p = await proxy(
      {
        type: 'limited',
        allowed_hosts: [`allowed.test:${originPort}`],
        allow_package_managers: false,
        allow_mcp_servers: false,
      },
      { allowedAddresses: [] },
    );
    try {
      expect((await connectVia(p.socket.path, `allowed.test:${originPort}`)).head).toMatch(
        /x-mango-egress-rule: loopback_address/,
      );
    } finally {
      await p.socket.close();
    }
  });

  it('plain HTTP: absolute-form requests are forwarded with the Host of the URL and without proxy credentials; origin-form is refused', async () => {
    const p = await proxy({
      type: 'limited',
      allowed_hosts: [`allowed.test:${originPort}`],
      allow_package_managers: false,
      allow_mcp_servers: false,
    });
    try {
      seen.length = 0;
      const got = await getVia(p.socket.path, `http://allowed.test:${originPort}/p?q=1`, 'body-bytes');
      expect(got).toMatchObject({ status: 200, text: 'origin:POST:/p?q=1:body-bytes' });
      expect(seen[0]!.headers.host).toBe(`allowed.test:${originPort}`);
      expect(seen[0]!.headers['proxy-authorization']).toBeUndefined();
      const rec = await p.next();
      expect(rec).toMatchObject({ kind: 'http', allowed: true, bytesOut: 10 });
      const origin = await getVia(p.socket.path, '/p');
      expect(origin.status).toBe(400);
    } finally {
      await p.socket.close();
    }
  });

  it('an allowed upstream that is not listening: 502, recorded as allowed and failed', async () => {
    const closed = createTcpServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const p = await proxy({
      type: 'limited',
      allowed_hosts: [`allowed.test:${port}`],
      allow_package_managers: false,
      allow_mcp_servers: false,
    });
    try {
      expect((await connectVia(p.socket.path, `allowed.test:${port}`)).head).toMatch(/^HTTP\/1\.1 502/);
      expect(await p.next()).toMatchObject({ allowed: true, failure: 'upstream_failed' });
    } finally {
      await p.socket.close();
    }
  });

  it('a silent tunnel is cut at the idle bound and a tunnel over the byte cap is cut at the cap', async () => {
    const p = await proxy(
      {
        type: 'limited',
        allowed_hosts: [`allowed.test:${originPort}`],
        allow_package_managers: false,
        allow_mcp_servers: false,
      },
      {},
      { idleMs: 100, maxBytes: 1024 },
    );
    try {
      const silent = await connectVia(p.socket.path, `allowed.test:${originPort}`);
      expect(silent.head).toMatch(/^HTTP\/1\.1 200/);
      expect(await p.next()).toMatchObject({ allowed: true, failure: 'idle' });
      const big = await connectVia(p.socket.path, `allowed.test:${originPort}`);
      void big.send(`POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 4096\r\n\r\n${'x'.repeat(4096)}`);
      const rec = await p.next();
      expect(rec).toMatchObject({ allowed: true, failure: 'too_large' });
      expect(rec.bytesOut).toBeGreaterThan(1024);
    } finally {
      await p.socket.close();
    }
  });
});
