import { gzipSync } from 'node:zlib';
import { freePort, median, metricValue, rawRequest, RawResult } from '@mango/testing';
import { filePart, FilesUnderTest, MIB, multipart, startFiles } from './support';

/**
 * apps/files answers a request without a valid credential before reading its body, as apps/api does
 * (docs/security-model-notes/pre-auth.md): a gzip bomb to a JSON route and a 30 MB upload cost what a
 * small unauthenticated request costs (ratio of medians of interleaved runs), and nothing is parsed
 * (`mango_http_request_body_bytes_total`) or stored. Authenticated, a compressed body is refused unread,
 * also on the streamed upload route, and a too-deep JSON body is a 400.
 */
describe('Files: nothing expensive before authentication (real apps/files process)', () => {
  let files: FilesUnderTest;
  let key: string;
  let metricsUrl: string;
  const nothingStored = { files: 0, cleanups: 0, objects: [], incomplete: [] };

  beforeAll(async () => {
    const metricsPort = await freePort();
    files = await startFiles('filespreauth', {
      MANGO_METRICS_PORT: String(metricsPort),
      MANGO_METRICS_HOST: '127.0.0.1',
    });
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    key = (await files.issueKey('wrkspc_default')).api_key;
  }, 120_000);
  afterAll(() => files?.close());

  const RUNS = 7;
  const json = { 'content-type': 'application/json' };
  const gzipBomb = gzipSync(JSON.stringify(new Array(4_000_000).fill(0)), { level: 9 });
  const bigUpload = multipart([filePart(Buffer.alloc(30 * MIB, 0x61))]);
  const bodyBytes = () => metricValue(metricsUrl, 'mango_http_request_body_bytes_total');
  const memoryStores = async () => Number((await files.sql('SELECT count(*) AS n FROM memory_stores'))[0].n);

  async function versusSmall(label: string, send: () => Promise<RawResult>) {
    const base: number[] = [];
    const probe: number[] = [];
    const results: RawResult[] = [];
    for (let i = 0; i < RUNS; i++) {
      const b = await rawRequest(`${files.url}/v1/memory_stores`, { headers: json, body: '{"name":"x"}' });
      expect(b.status).toBe(401);
      base.push(b.msToResponse);
      const r = await send();
      results.push(r);
      probe.push(r.msToResponse);
    }
    for (const r of results) {
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    }
    const figures = { small_ms: median(base), probe_ms: median(probe), ratio: median(probe) / median(base) };
    console.log(`[pre-auth files] ${label}: ${JSON.stringify(figures)}`);
    return { ...figures, results };
  }

  it('an unauthenticated gzip bomb to a JSON route is 401 as fast as a small request; nothing is inflated or parsed', async () => {
    const before = await bodyBytes();
    expect(before).toBeDefined();
    const { ratio } = await versusSmall(`gzip bomb (${gzipBomb.length} bytes)`, () =>
      rawRequest(`${files.url}/v1/memory_stores`, {
        headers: { ...json, 'content-encoding': 'gzip' },
        body: gzipBomb,
      }),
    );
    expect(ratio).toBeLessThanOrEqual(3);
    expect(await bodyBytes()).toBe(before);
    expect(await memoryStores()).toBe(0);
  }, 180_000);

  it('an unauthenticated 30 MB upload is answered 401 before it is sent; the connection is closed; nothing is stored', async () => {
    const { ratio, results } = await versusSmall('30 MB upload', () =>
      rawRequest(`${files.url}/v1/files`, {
        headers: { 'content-type': bigUpload.contentType },
        body: bigUpload.body,
      }),
    );
    expect(ratio).toBeLessThanOrEqual(3);
    for (const r of results) {
      expect(r.bytesSentAtResponse).toBeLessThan(bigUpload.body.length / 2);
      expect(r.connectionClose).toBe(true);
    }
    expect(await files.stored()).toEqual(nothingStored);
  }, 180_000);

  it('authenticated, a compressed upload or JSON body is refused unread with a 400 naming Content-Encoding', async () => {
    const before = await bodyBytes();
    const upload = multipart([filePart('hello')]);
    const compressedUpload = await rawRequest(`${files.url}/v1/files`, {
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': upload.contentType,
        'content-encoding': 'gzip',
      },
      body: gzipSync(upload.body),
    });
    expect(compressedUpload.status).toBe(400);
    expect(compressedUpload.body.error.type).toBe('invalid_request_error');
    expect(compressedUpload.body.error.message).toMatch(/Content-Encoding gzip is not accepted/);
    const bomb = await rawRequest(`${files.url}/v1/memory_stores`, {
      headers: { ...json, authorization: `Bearer ${key}`, 'content-encoding': 'gzip' },
      body: gzipBomb,
    });
    expect(bomb.status).toBe(400);
    expect(bomb.body.error.message).toMatch(/Content-Encoding/);
    expect(await bodyBytes()).toBe(before);
    expect(await files.stored()).toEqual(nothingStored);
    expect(await memoryStores()).toBe(0);
  }, 60_000);

  it('authenticated, a JSON body nested deeper than the limit is 400 and nothing is stored', async () => {
    let nested: unknown = 'x';
    for (let i = 0; i < 200; i++) nested = [nested];
    const res = await rawRequest(`${files.url}/v1/memory_stores`, {
      headers: { ...json, authorization: `Bearer ${key}` },
      body: JSON.stringify({ name: 'deep', metadata: { a: nested } }),
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/nested deeper than 128/);
    expect(await memoryStores()).toBe(0);
  }, 60_000);

  // Last: it stores a File.
  it('an upload with Expect: 100-continue gets no 100 Continue without a credential (nothing sent); with one it uploads', async () => {
    const refused = await rawRequest(`${files.url}/v1/files`, {
      headers: { 'content-type': bigUpload.contentType },
      body: bigUpload.body,
      expectContinue: true,
    });
    expect(refused.status).toBe(401);
    expect(refused.bytesSentAtResponse).toBe(0);
    const small = multipart([filePart('hello')]);
    const uploaded = await rawRequest(`${files.url}/v1/files`, {
      headers: { authorization: `Bearer ${key}`, 'content-type': small.contentType },
      body: small.body,
      expectContinue: true,
    });
    expect(uploaded.status).toBe(201);
    expect(uploaded.body.size_bytes).toBe(5);
  }, 60_000);
});
