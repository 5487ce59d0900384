import { randomBytes } from 'node:crypto';
import { globalAgent, type ClientRequest, type IncomingMessage } from 'node:http';
import { finished } from 'node:stream/promises';
import { ObjectStore } from './object-store';

const settings = () => ({
  endpoint: process.env.MANGO_S3_ENDPOINT ?? '',
  accessKey: process.env.MANGO_S3_ACCESS_KEY ?? '',
  secretKey: process.env.MANGO_S3_SECRET_KEY ?? '',
  region: process.env.MANGO_S3_REGION ?? 'us-east-1',
  bucket: `mango-test-${randomBytes(4).toString('hex')}`,
});

describe('ObjectStore against the real S3 server', () => {
  // The store keeps connections alive, and minio's retry of a 5xx answer (the concurrent makeBucket below
  // sometimes gets a 500 from versitygw) leaves that answer's socket checked out: it kept Jest from
  // exiting in one CI run. The pool's sockets are closed when the suite ends.
  afterAll(() => globalAgent.destroy());
  it('creates its bucket idempotently and round-trips an object', async () => {
    const store = new ObjectStore(settings());
    await Promise.all([store.ensureBucket(), store.ensureBucket()]);
    await store.ensureBucket();
    await store.client.putObject(store.bucket, 'a/b.txt', Buffer.from('hello'));
    const chunks: Buffer[] = [];
    for await (const c of await store.client.getObject(store.bucket, 'a/b.txt')) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('hello');
    expect(await store.ping()).toBe('ok');
    await store.client.removeObject(store.bucket, 'a/b.txt');
    await store.client.removeBucket(store.bucket);
  });

  it('reuses its connection to the store from one request to the next (keep-alive on both ends)', async () => {
    const store = new ObjectStore(settings());
    await store.ensureBucket();
    await store.client.putObject(store.bucket, 'k', Buffer.from('x'));
    const reused: boolean[] = [];
    for (let i = 0; i < 3; i++) {
      const body = (await store.client.getObject(store.bucket, 'k')) as IncomingMessage & {
        req: ClientRequest;
      };
      body.resume();
      await finished(body);
      reused.push(body.req.reusedSocket);
    }
    // The first GET may open a connection (or take the put's); the next ones take it from the pool.
    expect(reused.slice(1)).toEqual([true, true]);
    await store.client.removeObject(store.bucket, 'k');
    await store.client.removeBucket(store.bucket);
  });

  it('is rejected with a wrong secret (the server really checks signatures)', async () => {
    const store = new ObjectStore({ ...settings(), secretKey: 'wrong-secret-key-123' });
    await expect(store.client.bucketExists(store.bucket)).rejects.toThrow();
    expect(await store.ping()).toBe('unreachable');
  });

  it('lists unfinished uploads even when one is aborted between the listing and its parts (a sweeper at work)', async () => {
    const store = new ObjectStore(settings());
    await store.ensureBucket();
    const kept = await store.client.initiateNewMultipartUpload(store.bucket, 'u/kept', {});
    const swept = await store.client.initiateNewMultipartUpload(store.bucket, 'u/swept', {});
    // The first time the client asks for an upload's parts, the other upload is aborted first: the real
    // store then answers NoSuchUpload for it (the fault matrix met this with the files sweeper running).
    const client = store.client as unknown as {
      listParts: (b: string, k: string, id: string) => Promise<unknown>;
    };
    const listParts = client.listParts.bind(client);
    let aborted = false;
    client.listParts = async (b, k, id) => {
      if (!aborted) {
        aborted = true;
        await store.client.abortMultipartUpload(store.bucket, 'u/swept', swept);
      }
      return listParts(b, k, id);
    };
    expect(await store.unfinishedUploads('u/')).toEqual([{ key: 'u/kept', uploadId: kept }]);
    expect(aborted).toBe(true);
    await store.client.abortMultipartUpload(store.bucket, 'u/kept', kept);
    expect(await store.unfinishedUploads('u/')).toEqual([]);
    await store.client.removeBucket(store.bucket);
  });
});
