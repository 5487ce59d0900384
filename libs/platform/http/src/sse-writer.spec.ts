import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { sseFrame, sseWriter } from './sse-writer';

/** A server whose one route writes two frames (a shared one and a string) through sseWriter, then ends. */
function serve(wrap?: (res: import('node:http').ServerResponse) => void): Promise<Server> {
  const shared = sseFrame('id: 1\nevent: e\ndata: {"text":"héllo"}\n\n');
  const server = createServer((req, res) => {
    wrap?.(res);
    res.setHeader('content-type', 'text/event-stream');
    res.flushHeaders();
    const write = sseWriter(req, res);
    write(shared);
    write('event: ping\ndata: {}\n\n');
    res.end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The raw bytes of the response to `request` (the server closes or ends the exchange). */
function exchange(server: Server, request: string): Promise<string> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => {
      out += d;
      // A chunked body is complete at its last chunk.
      if (out.endsWith('0\r\n\r\n')) socket.end();
    });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

describe('sseWriter', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it('writes each frame as one well-formed HTTP/1.1 chunk, and the response ends with the last chunk', async () => {
    server = await serve();
    const raw = await exchange(server, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const split = raw.indexOf('\r\n\r\n');
    const head = raw.slice(0, split);
    const body = raw.slice(split + 4);
    expect(head).toMatch(/transfer-encoding: chunked/i);
    const first = Buffer.from('id: 1\nevent: e\ndata: {"text":"héllo"}\n\n');
    const second = Buffer.from('event: ping\ndata: {}\n\n');
    expect(body).toBe(
      `${first.length.toString(16)}\r\n${first.toString()}\r\n${second.length.toString(16)}\r\n${second.toString()}\r\n0\r\n\r\n`,
    );
  });

  it('sends no body to a HEAD request', async () => {
    server = await serve();
    const raw = await exchange(server, 'HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(raw.slice(raw.indexOf('\r\n\r\n') + 4)).toBe('');
  });

  it('writes plain frames through res.write on an unchunked (HTTP/1.0) response and behind a wrapped res.write', async () => {
    server = await serve();
    const raw = await exchange(server, 'GET / HTTP/1.0\r\n\r\n');
    expect(raw.slice(raw.indexOf('\r\n\r\n') + 4)).toBe(
      'id: 1\nevent: e\ndata: {"text":"héllo"}\n\nevent: ping\ndata: {}\n\n',
    );
    server.close();
    const seen: string[] = [];
    server = await serve((res) => {
      const original = res.write.bind(res);
      res.write = ((chunk: Buffer | string) => {
        seen.push(String(chunk));
        return original(chunk);
      }) as typeof res.write;
    });
    await exchange(server, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(seen).toEqual(['id: 1\nevent: e\ndata: {"text":"héllo"}\n\n', 'event: ping\ndata: {}\n\n']);
  });
});
