import { Header } from 'tar';
import { backupRefused } from './backup-error';

/**
 * The tar framing of a backup archive, streamed both ways: entries are written as they are produced (their
 * size known up front) and read one at a time, pulling bytes only as the consumer takes them, so neither
 * direction holds more than a chunk. Headers are encoded and decoded by the `tar` package; only regular
 * files with the names a backup writes are accepted on reading (the archive is input: validated).
 */
export interface TarEntrySource {
  name: string;
  size: number;
  body: AsyncIterable<Uint8Array> | Uint8Array;
}

const BLOCK = 512;
const ZEROS = Buffer.alloc(BLOCK * 2);

/** The tar stream of `entries`: header, body (exactly `size` bytes, else it throws), padding; then the end. */
export async function* writeTar(entries: AsyncIterable<TarEntrySource>, mtime: Date): AsyncGenerator<Buffer> {
  for await (const entry of entries) {
    const header = new Header({
      path: entry.name,
      mode: 0o600,
      uid: 0,
      gid: 0,
      size: entry.size,
      mtime,
      type: 'File',
    });
    header.encode();
    yield header.block!;
    let written = 0;
    const body = entry.body instanceof Uint8Array ? [entry.body] : entry.body;
    for await (const chunk of body) {
      written += chunk.length;
      if (written > entry.size) break;
      yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
    if (written !== entry.size)
      throw new Error(
        `${entry.name} changed while it was read: expected ${entry.size} bytes, got ${written}`,
      );
    const pad = (BLOCK - (entry.size % BLOCK)) % BLOCK;
    if (pad) yield ZEROS.subarray(0, pad);
  }
  yield ZEROS;
}

/** Pulls exact byte counts from a chunked stream. */
class ByteReader {
  private buffered: Buffer[] = [];
  private length = 0;
  private done = false;
  constructor(private readonly source: AsyncIterator<Uint8Array>) {}

  private async fill(n: number): Promise<boolean> {
    while (this.length < n && !this.done) {
      const next = await this.source.next();
      if (next.done) this.done = true;
      else {
        const b = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
        this.buffered.push(b);
        this.length += b.length;
      }
    }
    return this.length >= n;
  }

  /** Exactly n bytes, or null at a clean end (no byte left); a short read is truncation. */
  async exactly(n: number): Promise<Buffer | null> {
    if (!(await this.fill(n))) {
      if (this.length === 0) return null;
      throw backupRefused('the archive is truncated (it ends inside a tar block)');
    }
    const all = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.buffered = rest.length ? [rest] : [];
    this.length = rest.length;
    return out;
  }

  /** Up to `max` bytes that are already here or the next chunk; null at the end. */
  async some(max: number): Promise<Buffer | null> {
    if (!(await this.fill(1))) return null;
    const first = this.buffered[0]!;
    if (first.length <= max) {
      this.buffered.shift();
      this.length -= first.length;
      return first;
    }
    this.buffered[0] = first.subarray(max);
    this.length -= max;
    return first.subarray(0, max);
  }
}

export interface TarEntry {
  name: string;
  size: number;
  /** The entry's bytes; must be consumed (or `skip`ped) before the next entry is read. */
  body: AsyncIterable<Buffer>;
}

/**
 * Reads the entries of a tar stream in order. Refuses anything but regular files with names matching
 * `allowedName`, a header whose checksum fails, truncation, and data after the end-of-archive blocks.
 */
export async function* readTar(
  source: AsyncIterable<Uint8Array>,
  allowedName: (name: string) => boolean,
): AsyncGenerator<TarEntry> {
  const reader = new ByteReader(source[Symbol.asyncIterator]());
  for (;;) {
    const block = await reader.exactly(BLOCK);
    if (!block) throw backupRefused('the archive is truncated (no end-of-archive marker)');
    if (block.every((b) => b === 0)) {
      const second = await reader.exactly(BLOCK);
      if (!second || !second.every((b) => b === 0))
        throw backupRefused('the archive is damaged (a lone zero block inside the tar stream)');
      // Anything after the end marker is not ours; reading to the end also lets age check its last chunk.
      if (await reader.some(BLOCK)) throw backupRefused('the archive has data after its end');
      return;
    }
    const header = new Header(block);
    if (!header.cksumValid) throw backupRefused('the archive is damaged (a tar header checksum fails)');
    const name = header.path ?? '';
    if (header.type !== 'File' || !allowedName(name))
      throw backupRefused(`the archive has an unexpected member ${JSON.stringify(name.slice(0, 100))}`);
    const size = header.size ?? 0;
    if (!Number.isSafeInteger(size) || size < 0)
      throw backupRefused(`the archive member ${name} has an invalid size`);
    let remaining = size;
    const next = async () => {
      const chunk = await reader.some(Math.min(remaining, 1 << 20));
      if (!chunk) throw backupRefused(`the archive is truncated (inside ${name})`);
      remaining -= chunk.length;
      return chunk;
    };
    const body = (async function* () {
      while (remaining > 0) yield await next();
    })();
    yield { name, size, body };
    // What the consumer left of the body (it stopped early, or skipped it).
    while (remaining > 0) await next();
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (pad && !(await reader.exactly(pad))) throw backupRefused('the archive is truncated (padding)');
  }
}

/** A whole small entry (a manifest), refused above `max` bytes. */
export async function readSmall(entry: TarEntry, max: number): Promise<Buffer> {
  if (entry.size > max) throw backupRefused(`the archive member ${entry.name} is larger than ${max} bytes`);
  const chunks: Buffer[] = [];
  for await (const c of entry.body) chunks.push(c);
  return Buffer.concat(chunks);
}
