/**
 * The bench's proxy floor: one more HTTP hop between the client and S3 and nothing else — a bare
 * node:http server (no Nest, no database, no multipart, no payload hashing) that streams a PUT's body
 * into an S3 PUT of the same Content-Length and an S3 GET into the response, with the same minio client
 * and UNSIGNED-PAYLOAD as apps/files in MANGO_S3_PAYLOAD_SIGNING=unsigned. Started as its own process
 * by main.ts (like apps/files), so its CPU is not the client's.
 * Routes: GET /healthz, PUT /o/<name>, GET /o/<name>.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { finished, pipeline } from 'node:stream/promises';
import { ObjectStore } from '@mango/adapter-object-store';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

const store = new ObjectStore({
  endpoint: env('MANGO_S3_ENDPOINT'),
  accessKey: env('MANGO_S3_ACCESS_KEY'),
  secretKey: env('MANGO_S3_SECRET_KEY'),
  region: process.env.MANGO_S3_REGION ?? 'us-east-1',
  bucket: env('MANGO_S3_BUCKET'),
  payloadSigning: 'unsigned',
});

const server = createServer((req, res) => {
  const fail = (err: unknown) => {
    if (!res.headersSent) res.writeHead(500).end(String(err));
    else res.destroy();
  };
  if (req.url === '/healthz') return void res.end('ok');
  const name = req.url?.startsWith('/o/') ? decodeURIComponent(req.url.slice(3)) : undefined;
  if (!name) return void res.writeHead(404).end();
  if (req.method === 'PUT') {
    void (async () => {
      const answer = await store.streamClient.makeRequestStreamAsync(
        {
          method: 'PUT',
          bucketName: store.bucket,
          objectName: name,
          headers: { 'Content-Length': Number(req.headers['content-length']) },
        },
        req,
        '',
        [200],
        '',
      );
      answer.resume();
      await finished(answer);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    })().catch(fail);
  } else {
    void (async () => {
      const body = (await store.client.getObject(store.bucket, name)) as IncomingMessage;
      res.writeHead(200, { 'content-length': body.headers['content-length'] });
      await pipeline(body, res);
    })().catch(fail);
  }
});
server.listen(Number(env('BENCH_HOP_PORT')), '127.0.0.1');
