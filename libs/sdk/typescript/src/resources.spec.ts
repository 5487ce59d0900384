import busboy from 'busboy';
import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';
import { MangoClient } from './client';
import { NotFoundError } from './errors';

const API_KEY = 'mango_ak_test_workspace_key';
const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

interface Part {
  name: string;
  filename?: string;
  mimeType?: string;
  bytes: Buffer;
}
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  parts: Part[];
}

/** A real HTTP server that parses multipart bodies with busboy and answers with the scripted handler. */
async function startServer(
  handle: (seen: Seen, res: ServerResponse) => void,
): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const record: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, parts: [] };
    seen.push(record);
    if (!(req.headers['content-type'] ?? '').startsWith('multipart/form-data')) {
      req.resume();
      req.on('end', () => handle(record, res));
      return;
    }
    const bb = busboy({ headers: req.headers, preservePath: true });
    bb.on('file', (name, stream, info) => {
      const part: Part = { name, filename: info.filename, mimeType: info.mimeType, bytes: Buffer.alloc(0) };
      record.parts.push(part);
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => (part.bytes = Buffer.concat(chunks)));
    });
    bb.on('field', (name, value) => record.parts.push({ name, bytes: Buffer.from(value) }));
    bb.on('close', () => handle(record, res));
    req.pipe(bb);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, seen };
}

const binary = (size: number): Buffer => {
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i++) out[i] = (i * 7 + (i >> 8)) & 0xff;
  return out;
};

describe('generated resources', () => {
  it('expose every operation of openapi.yaml at the path its operationId names', () => {
    const spec = parse(readFileSync(join(__dirname, '../../../../openapi.yaml'), 'utf8')) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const client = new MangoClient({ baseUrl: 'http://127.0.0.1:1', apiKey: API_KEY });
    const ids = Object.values(spec.paths).flatMap((item) =>
      Object.values(item).flatMap((op) =>
        op && typeof op === 'object' && op.operationId ? [op.operationId] : [],
      ),
    );
    expect(ids.length).toBeGreaterThan(60);
    const missing = ids.filter((id) => {
      let node: unknown = client;
      for (const part of id.split('.')) node = (node as Record<string, unknown> | undefined)?.[camel(part)];
      return typeof node !== 'function';
    });
    expect(missing).toEqual([]);
    // Hand-written resources keep their refinements and gain the generated operations they lack.
    expect(typeof client.sessions.threads.events.list).toBe('function');
    expect(typeof client.environments.work.poll).toBe('function');
  });

  it('files.upload sends one multipart part with filename, type and exact binary bytes', async () => {
    const bytes = binary(300_000);
    const { server, url, seen } = await startServer((_s, res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'file_1', type: 'file', filename: 'blob.bin', size_bytes: bytes.length }));
    });
    try {
      const client = new MangoClient({ baseUrl: url, apiKey: API_KEY, maxRetries: 0 });
      const file = await client.files.upload({
        file: { data: bytes, filename: 'blob.bin', contentType: 'application/octet-stream' },
      });
      expect(file.id).toBe('file_1');
      expect(seen[0].method).toBe('POST');
      expect(seen[0].url).toBe('/v1/files');
      expect(seen[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(seen[0].parts).toHaveLength(1);
      const [part] = seen[0].parts;
      expect(part.name).toBe('file');
      expect(part.filename).toBe('blob.bin');
      expect(part.mimeType).toBe('application/octet-stream');
      expect(part.bytes.equals(bytes)).toBe(true);
    } finally {
      server.close();
    }
  });

  it('skills.create sends a files[] part per file plus fields; a Blob keeps its own type', async () => {
    const { server, url, seen } = await startServer((_s, res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"id":"skill_1"}');
    });
    try {
      const client = new MangoClient({ baseUrl: url, apiKey: API_KEY, maxRetries: 0 });
      await client.skills.create({
        'files[]': [
          { data: '---\nname: x\n---\n', filename: 'x/SKILL.md', contentType: 'text/markdown' },
          { data: new Blob([new Uint8Array([0, 255])], { type: 'application/x-bin' }), filename: 'x/a.bin' },
        ],
        display_title: 'X',
      });
      const parts = seen[0].parts;
      expect(parts.map((p) => [p.name, p.filename, p.mimeType])).toEqual([
        ['files[]', 'x/SKILL.md', 'text/markdown'],
        ['files[]', 'x/a.bin', 'application/x-bin'],
        ['display_title', undefined, undefined],
      ]);
      expect([...parts[1].bytes]).toEqual([0, 255]);
      expect(parts[2].bytes.toString()).toBe('X');
    } finally {
      server.close();
    }
  });

  it('files.content retries a 503 and resolves to the binary body; a 404 is a typed error', async () => {
    const bytes = binary(70_000);
    let calls = 0;
    const { server, url, seen } = await startServer((s, res) => {
      calls += 1;
      if (s.url.includes('file_missing')) {
        res.writeHead(404, { 'content-type': 'application/json', 'request-id': 'req_1' });
        res.end(
          JSON.stringify({
            type: 'error',
            error: { type: 'not_found_error', message: 'nope' },
            request_id: 'req_1',
          }),
        );
      } else if (calls === 1) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after-ms': '1' });
        res.end(
          JSON.stringify({
            type: 'error',
            error: { type: 'api_error', message: 'busy' },
            request_id: 'req_2',
          }),
        );
      } else {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(bytes);
      }
    });
    try {
      const client = new MangoClient({ baseUrl: url, apiKey: API_KEY, maxRetries: 2 });
      const response = await client.files.content('file_1');
      expect(response.headers.get('content-type')).toBe('application/octet-stream');
      expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
      expect(seen.map((s) => s.url)).toEqual(['/v1/files/file_1/content', '/v1/files/file_1/content']);
      await expect(client.files.content('file_missing')).rejects.toBeInstanceOf(NotFoundError);
    } finally {
      server.close();
    }
  });

  it('a generated list (sessions.threads.list) follows next_page', async () => {
    const { server, url, seen } = await startServer((s, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const second = s.url.includes('page=p2');
      res.end(
        JSON.stringify({ data: [{ id: second ? 'sthr_2' : 'sthr_1' }], next_page: second ? null : 'p2' }),
      );
    });
    try {
      const client = new MangoClient({ baseUrl: url, apiKey: API_KEY, maxRetries: 0 });
      const ids: string[] = [];
      for await (const thread of client.sessions.threads.list('sesn_1', { limit: 1 })) ids.push(thread.id);
      expect(ids).toEqual(['sthr_1', 'sthr_2']);
      expect(seen.map((s) => s.url)).toEqual([
        '/v1/sessions/sesn_1/threads?limit=1',
        '/v1/sessions/sesn_1/threads?limit=1&page=p2',
      ]);
    } finally {
      server.close();
    }
  });
});
