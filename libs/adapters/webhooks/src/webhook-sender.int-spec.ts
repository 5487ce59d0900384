import { createServer, Server } from 'node:http';
import { parseCidrList } from '@mango/domain-webhooks';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, SecretBox } from './secret-box';
import { WebhookSender } from './webhook-sender';

/** The sender against a real HTTP server on loopback, reached through a host name (DNS path) and literals. */
describe('WebhookSender (real HTTP on loopback)', () => {
  let server: Server;
  let port: number;
  const seen: Array<{ url: string; headers: Record<string, unknown>; body: string }> = [];
  let status = 200;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += String(c)));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', headers: req.headers, body });
        res.writeHead(status, status >= 300 && status < 400 ? { location: '/elsewhere' } : {}).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => {
    seen.length = 0;
    status = 200;
  });

  const secret = generateWebhookSecret();
  const input = (url: string) => ({
    url,
    messageId: 'whe_01JD2Y3QX9V5M8K7R6T4W2P0AB',
    body: '{"type":"event"}',
    secrets: [secret],
    timestamp: new Date(),
  });

  it('resolves a host name, judges the address, connects and signs (verifiable with standardwebhooks)', async () => {
    const sender = new WebhookSender({ allow: parseCidrList('127.0.0.0/8,::1/128'), timeoutMs: 2000 });
    const r = await sender.send(input(`http://localhost:${port}/hook`));
    expect(r).toMatchObject({ delivered: true, statusCode: 200, error: null, permanent: false });
    expect(seen).toHaveLength(1);
    const h = seen[0]!.headers as Record<string, string>;
    expect(() =>
      new Webhook(secret).verify(seen[0]!.body, {
        'webhook-id': h['webhook-id']!,
        'webhook-timestamp': h['webhook-timestamp']!,
        'webhook-signature': h['webhook-signature']!,
      }),
    ).not.toThrow();
  });

  it('refuses a host name that resolves to a loopback address outside the allowlist, without connecting', async () => {
    const sender = new WebhookSender({ allow: [], timeoutMs: 2000 });
    const r = await sender.send(input(`http://localhost:${port}/hook`));
    expect(r).toMatchObject({ delivered: false, statusCode: null, permanent: true });
    expect(r.error).toMatch(/loopback/);
    expect(seen).toEqual([]);
  });

  it('refuses IP literals outside the allowlist and never follows a redirect', async () => {
    const strict = new WebhookSender({ allow: parseCidrList('127.0.0.1'), timeoutMs: 2000 });
    const literal = await strict.send(input(`http://127.0.0.3:${port}/hook`));
    expect(literal).toMatchObject({ delivered: false, permanent: true });
    status = 307;
    const redirected = await strict.send(input(`http://127.0.0.1:${port}/hook`));
    expect(redirected).toMatchObject({ delivered: false, statusCode: 307, permanent: false });
    expect(redirected.error).toMatch(/redirect/);
    expect(seen.map((s) => s.url)).toEqual(['/hook']);
  });

  it('times out a silent endpoint', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const sender = new WebhookSender({ allow: parseCidrList('127.0.0.1'), timeoutMs: 300 });
    const r = await sender.send(input(`http://127.0.0.1:${(silent.address() as { port: number }).port}/`));
    expect(r).toMatchObject({ delivered: false, statusCode: null, permanent: false });
    expect(r.error).toMatch(/300 ms/);
    silent.closeAllConnections();
    await new Promise<void>((res) => silent.close(() => res()));
  });

  /** A receiver on 127.0.0.1 that answers 200 and then keeps writing `chunk` every `everyMs`; records socket closes. */
  async function endlessReceiver(chunk: Buffer, everyMs: number) {
    const closed: Promise<void>[] = [];
    const srv = createServer((_req, res) => {
      res.writeHead(200);
      const t = setInterval(() => res.write(chunk), everyMs);
      res.on('close', () => clearInterval(t));
    });
    srv.on('connection', (s) => closed.push(new Promise((r) => s.once('close', () => r()))));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(srv.address() as { port: number }).port}/`,
      allClosed: () => Promise.all(closed),
      connections: () => closed.length,
      close: () => {
        srv.closeAllConnections();
        return new Promise<void>((r) => srv.close(() => r()));
      },
    };
  }

  it('the timeout covers the body: a 200 that trickles a byte at a time is a failed, retryable attempt and the connection is closed', async () => {
    const trickling = await endlessReceiver(Buffer.from('x'), 50);
    try {
      const sender = new WebhookSender({ allow: parseCidrList('127.0.0.1'), timeoutMs: 400 });
      const r = await sender.send(input(trickling.url));
      expect(r).toMatchObject({ delivered: false, statusCode: 200, permanent: false });
      expect(r.error).toMatch(/no complete answer within 400 ms/);
      await trickling.allClosed();
      expect(trickling.connections()).toBe(1);
    } finally {
      await trickling.close();
    }
  });

  it('an endless answer is cut at the response cap (counted while reading) and the connection is closed', async () => {
    const flooding = await endlessReceiver(Buffer.alloc(16 * 1024, 120), 1);
    try {
      const sender = new WebhookSender({
        allow: parseCidrList('127.0.0.1'),
        timeoutMs: 60_000,
        maxResponseBytes: 32 * 1024,
      });
      const r = await sender.send(input(flooding.url));
      expect(r).toMatchObject({ delivered: false, statusCode: 200, permanent: false });
      expect(r.error).toMatch(/larger than the 32768-byte cap/);
      await flooding.allClosed();
    } finally {
      await flooding.close();
    }
  });

  it('a cancelled send stops the request mid-body and the connection is closed', async () => {
    const trickling = await endlessReceiver(Buffer.from('x'), 20);
    try {
      const sender = new WebhookSender({ allow: parseCidrList('127.0.0.1'), timeoutMs: 600_000 });
      const cancel = new AbortController();
      const sending = sender.send(input(trickling.url), cancel.signal).catch((e: unknown) => e);
      while (trickling.connections() === 0) await new Promise((r) => setTimeout(r, 10));
      cancel.abort(new Error('activity cancelled'));
      expect(await sending).toBeInstanceOf(Error);
      await trickling.allClosed();
    } finally {
      await trickling.close();
    }
  });

  it('seals and opens secrets; a wrong key cannot open them', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const box = new SecretBox(key);
    const sealed = box.seal(secret);
    expect(sealed).not.toContain(secret.slice(6));
    expect(box.open(sealed)).toBe(secret);
    expect(() => new SecretBox(Buffer.alloc(32, 8).toString('hex')).open(sealed)).toThrow();
    expect(() => new SecretBox('short')).toThrow(/MANGO_WEBHOOK_SECRETS_KEY/);
  });
});
