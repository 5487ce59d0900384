import { readTar, writeTar, TarEntrySource } from './tar-archive';

const collect = async (it: AsyncIterable<Buffer>) => {
  const out: Buffer[] = [];
  for await (const c of it) out.push(c);
  return Buffer.concat(out);
};
async function* from(entries: TarEntrySource[]) {
  yield* entries;
}
const ok = (n: string) => n === 'a' || n.startsWith('objects/');

describe('the backup tar framing', () => {
  it('reads back what it wrote, entry by entry, from one-byte chunks', async () => {
    const big = Buffer.alloc(70_000, 3);
    const tar = await collect(
      writeTar(
        from([
          { name: 'a', size: 3, body: Buffer.from('abc') },
          {
            name: 'objects/1',
            size: big.length,
            body: [big.subarray(0, 10), big.subarray(10)] as unknown as AsyncIterable<Uint8Array>,
          },
        ]),
        new Date(0),
      ),
    );
    expect(tar.length % 512).toBe(0);
    const bytes = (async function* () {
      for (let i = 0; i < tar.length; i += 997) yield tar.subarray(i, i + 997);
    })();
    const seen: Array<[string, number, Buffer]> = [];
    for await (const e of readTar(bytes, ok)) seen.push([e.name, e.size, await collect(e.body)]);
    expect(seen.map(([n, s]) => [n, s])).toEqual([
      ['a', 3],
      ['objects/1', big.length],
    ]);
    expect(seen[1]![2].equals(big)).toBe(true);
  });

  it('skips the body a consumer did not read, and stays aligned', async () => {
    const tar = await collect(
      writeTar(
        from([
          { name: 'a', size: 600, body: Buffer.alloc(600, 1) },
          { name: 'objects/2', size: 1, body: Buffer.from('z') },
        ]),
        new Date(0),
      ),
    );
    const names: string[] = [];
    for await (const e of readTar(
      (async function* () {
        yield tar;
      })(),
      ok,
    ))
      names.push(e.name);
    expect(names).toEqual(['a', 'objects/2']);
  });

  it('refuses a body that is not the size it declared (an object that changed while it was read)', async () => {
    await expect(
      collect(writeTar(from([{ name: 'a', size: 5, body: Buffer.from('abc') }]), new Date(0))),
    ).rejects.toThrow(/changed while it was read: expected 5 bytes, got 3/);
  });

  it.each([
    ['truncated inside an entry', (t: Buffer) => t.subarray(0, 700), /truncated/],
    [
      'without its end marker',
      (t: Buffer) => t.subarray(0, t.length - 1024),
      /truncated \(no end-of-archive/,
    ],
    ['with data after the end', (t: Buffer) => Buffer.concat([t, Buffer.from('x')]), /data after its end/],
    [
      'with a corrupted header',
      (t: Buffer) => Buffer.concat([Buffer.from('zz'), t.subarray(2)]),
      /checksum fails/,
    ],
  ])('refuses an archive %s', async (_label, damage, message) => {
    const tar = await collect(
      writeTar(from([{ name: 'a', size: 600, body: Buffer.alloc(600, 1) }]), new Date(0)),
    );
    const read = async () => {
      for await (const e of readTar(
        (async function* () {
          yield damage(tar);
        })(),
        ok,
      ))
        await collect(e.body);
    };
    await expect(read()).rejects.toThrow(message);
  });

  it('refuses a member whose name a backup never writes', async () => {
    const tar = await collect(
      writeTar(from([{ name: '../etc/passwd', size: 1, body: Buffer.from('x') }]), new Date(0)),
    );
    const read = async () => {
      for await (const e of readTar(
        (async function* () {
          yield tar;
        })(),
        ok,
      ))
        await collect(e.body);
    };
    await expect(read()).rejects.toThrow(/unexpected member "..\/etc\/passwd"/);
  });
});
