import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { judgeEgress, parseAllowEntries } from '@mango/domain-kernel';
import { egressRefusalIn, EgressRefusedError, JudgedEgress, judgedLookup } from './judged-egress';

const noLoopback = (a: string) => (a.startsWith('127.') ? 'a loopback address' : null);
const lookupOnce = (look: ReturnType<typeof judgedLookup>, host: string, all: boolean) =>
  new Promise<{ err: Error | null; address: unknown; family?: number }>((resolve) =>
    look(host, { all }, (err, address, family) => resolve({ err, address, family })),
  );

describe('judged egress (the address a connection uses is the address that was judged)', () => {
  it.each([
    ['every address allowed, one wanted', [{ address: '93.184.216.34', family: 4 }], false, null],
    [
      'one of several addresses refused',
      [
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
      false,
      /h\.test refused: a loopback address/,
    ],
    ['no address at all', [], false, /cannot resolve h\.test/],
  ])('%s', async (_label, addresses, all, refusal) => {
    const r = await lookupOnce(
      judgedLookup(noLoopback, async () => addresses),
      'h.test',
      all,
    );
    if (refusal) {
      expect(r.err).toBeInstanceOf(EgressRefusedError);
      expect(r.err!.message).toMatch(refusal);
    } else {
      expect(r.err).toBeNull();
      expect(r.address).toBe('93.184.216.34');
      expect(r.family).toBe(4);
    }
  });

  it('hands every judged address over when all are asked for; a resolver failure is a refusal', async () => {
    const two = [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::', family: 6 },
    ];
    expect(
      (
        await lookupOnce(
          judgedLookup(noLoopback, async () => two),
          'h.test',
          true,
        )
      ).address,
    ).toEqual(two);
    const failed = await lookupOnce(
      judgedLookup(noLoopback, () => Promise.reject(new Error('ENOTFOUND'))),
      'h.test',
      false,
    );
    expect(failed.err).toBeInstanceOf(EgressRefusedError);
  });

  it('fetch opens the connection to the resolved address, and a refusal never reaches the server', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const allowed = new JudgedEgress(
        () => null,
        async () => [{ address: '127.0.0.1', family: 4 }],
      );
      expect(await (await allowed.fetch(`http://pinned.example.test:${port}/`)).text()).toBe('ok');
      expect(hits).toBe(1);

      let lookups = 0;
      const rebinding = new JudgedEgress(noLoopback, async () =>
        ++lookups === 1 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }],
      );
      await rebinding.check(new URL(`http://rebind.example.test:${port}/`)); // the first answer passes
      const err = await rebinding.fetch(`http://rebind.example.test:${port}/`).catch((e: unknown) => e);
      expect(egressRefusalIn(err)?.message).toMatch(/rebind\.example\.test refused: a loopback address/);
      // An IP literal skips DNS and is judged before the request.
      const literal = await rebinding.fetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
      expect(literal).toBeInstanceOf(EgressRefusedError);
      expect(hits).toBe(1);
    } finally {
      server.close();
    }
  });

  it('an allowlist entry with a port lets that port through and no other, on the name and the literal paths', async () => {
    const hits = [0, 0];
    const servers = [0, 1].map((i) =>
      createServer((_req, res) => {
        hits[i]!++;
        res.end('ok');
      }),
    );
    for (const s of servers) await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const [allowedPort, otherPort] = servers.map((s) => (s.address() as AddressInfo).port);
    try {
      const allow = parseAllowEntries(`127.0.0.1:${allowedPort}`);
      const egress = new JudgedEgress(
        (a, port) => (judgeEgress(a, allow, port).allowed ? null : `${a} port ${port} is not allowed`),
        async () => [{ address: '127.0.0.1', family: 4 }],
      );
      expect(await (await egress.fetch(`http://svc.example.test:${allowedPort}/`)).text()).toBe('ok');
      expect(await (await egress.fetch(`http://127.0.0.1:${allowedPort}/`)).text()).toBe('ok');
      const byName = await egress.fetch(`http://svc.example.test:${otherPort}/`).catch((e: unknown) => e);
      expect(egressRefusalIn(byName)?.message).toMatch(`port ${otherPort} is not allowed`);
      const byLiteral = await egress.fetch(`http://127.0.0.1:${otherPort}/`).catch((e: unknown) => e);
      expect(byLiteral).toBeInstanceOf(EgressRefusedError);
      expect(hits).toEqual([2, 0]);
    } finally {
      for (const s of servers) s.close();
    }
  });
});
