import { randomBytes } from 'node:crypto';
import { createServer, globalAgent, IncomingMessage, Server } from 'node:http';
import { ObjectStore } from './object-store';
import { MetadataCredentialProvider } from './metadata-credentials';
import { s3CredentialsFrom } from './s3-credentials';

/**
 * The credential sources against the real S3 server (versitygw, which checks SigV4 signatures): the
 * standard AWS variables, and the default chain's instance profile (IMDSv2) served by a metadata server on
 * loopback that hands out the store's keys, as EC2's does. (Web identity and the container endpoint go
 * through the same provider; they need AWS STS or a platform endpoint, so they are not run here.)
 */
const keys = { accessKey: process.env.MANGO_S3_ACCESS_KEY!, secretKey: process.env.MANGO_S3_SECRET_KEY! };
/** The store's address only: the credentials come from the source under test. */
const s3 = { endpoint: process.env.MANGO_S3_ENDPOINT!, region: process.env.MANGO_S3_REGION ?? 'us-east-1' };

async function roundTrip(store: ObjectStore): Promise<string> {
  await store.ensureBucket();
  await store.client.putObject(store.bucket, 'k', Buffer.from('via the chain'));
  const chunks: Buffer[] = [];
  for await (const c of await store.client.getObject(store.bucket, 'k')) chunks.push(c as Buffer);
  await store.client.removeObject(store.bucket, 'k');
  await store.client.removeBucket(store.bucket);
  return Buffer.concat(chunks).toString();
}

const bucket = () => `mango-creds-${randomBytes(4).toString('hex')}`;

describe('S3 credentials from the environment and the default chain (real S3 server)', () => {
  afterAll(() => globalAgent.destroy());

  it('without credentials the store is anonymous and refused (so the cases below prove their source)', async () => {
    await expect(
      new ObjectStore({ ...s3, bucket: bucket(), accessKey: '' }).client.listBuckets(),
    ).rejects.toThrow();
  });

  it('AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY are used when MANGO_S3_* keys are absent', async () => {
    const credentials = s3CredentialsFrom({
      AWS_ACCESS_KEY_ID: keys.accessKey,
      AWS_SECRET_ACCESS_KEY: keys.secretKey,
    });
    expect(credentials.source).toBe('environment');
    expect(await roundTrip(new ObjectStore({ ...s3, ...credentials, bucket: bucket() }))).toBe(
      'via the chain',
    );
  });

  describe('the instance profile (IMDSv2 on loopback)', () => {
    let imds: Server;
    let url: string;
    const seen: string[] = [];
    const TOKEN = 'imds-session-token';

    beforeAll(async () => {
      imds = createServer((req: IncomingMessage, res) => {
        seen.push(`${req.method} ${req.url}`);
        if (req.method === 'PUT' && req.url === '/latest/api/token') return res.end(TOKEN);
        if (req.headers['x-aws-ec2-metadata-token'] !== TOKEN) return res.writeHead(401).end();
        if (req.url === '/latest/meta-data/iam/security-credentials/') return res.end('mango-role');
        if (req.url === '/latest/meta-data/iam/security-credentials/mango-role')
          return res.end(
            JSON.stringify({
              Code: 'Success',
              // As EC2 answers (and ECS): `AccessKeyId`.
              AccessKeyId: keys.accessKey,
              SecretAccessKey: keys.secretKey,
              Expiration: new Date(Date.now() + 3_600_000).toISOString(),
            }),
          );
        res.writeHead(404).end();
      });
      await new Promise<void>((r) => imds.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(imds.address() as { port: number }).port}`;
    });
    afterAll(() => new Promise<void>((r) => imds.close(() => r())));

    it('without any keys, the store signs with the credentials the metadata service hands out', async () => {
      const credentials = s3CredentialsFrom({ AWS_EC2_METADATA_SERVICE_ENDPOINT: url });
      expect(credentials).toEqual({ source: 'instance', chain: { kind: 'instance', endpoint: url } });
      expect(await roundTrip(new ObjectStore({ ...s3, ...credentials, bucket: bucket() }))).toBe(
        'via the chain',
      );
      // IMDSv2: a session token first, then the role, then its credentials (cached for the next requests).
      expect(seen.slice(0, 3)).toEqual([
        'PUT /latest/api/token',
        'GET /latest/meta-data/iam/security-credentials/',
        'GET /latest/meta-data/iam/security-credentials/mango-role',
      ]);
      expect(seen).toHaveLength(3);
    });
  });

  describe('the container credentials endpoint (ECS, EKS Pod Identity) on loopback', () => {
    let endpoint: Server;
    let url: string;
    let served = 0;
    let expiration = '';

    beforeAll(async () => {
      endpoint = createServer((req, res) => {
        if (req.url !== '/creds' || req.headers.authorization !== 'container-token')
          return res.writeHead(403).end();
        served++;
        res.end(
          JSON.stringify({
            AccessKeyId: keys.accessKey,
            SecretAccessKey: keys.secretKey,
            Expiration: expiration,
          }),
        );
      });
      await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(endpoint.address() as { port: number }).port}/creds`;
    });
    afterAll(() => new Promise<void>((r) => endpoint.close(() => r())));

    it('the store signs with the credentials the endpoint serves (with its authorization token)', async () => {
      expiration = new Date(Date.now() + 3_600_000).toISOString();
      const credentials = s3CredentialsFrom({
        AWS_CONTAINER_CREDENTIALS_FULL_URI: url,
        AWS_CONTAINER_AUTHORIZATION_TOKEN: 'container-token',
      });
      expect(credentials.source).toBe('container');
      expect(await roundTrip(new ObjectStore({ ...s3, ...credentials, bucket: bucket() }))).toBe(
        'via the chain',
      );
    });

    it('credentials are cached until five minutes before they expire, and concurrent asks share one fetch', async () => {
      let now = Date.parse('2026-12-07T12:00:00Z');
      expiration = '2026-12-07T13:00:00Z';
      const provider = new MetadataCredentialProvider(
        { kind: 'container', url, authorization: 'container-token' },
        () => now,
      );
      const before = served;
      const [a, b] = await Promise.all([provider.getCredentials(), provider.getCredentials()]);
      expect(a.getAccessKey()).toBe(keys.accessKey);
      expect(b).toBe(a);
      expect(served - before).toBe(1);
      now = Date.parse('2026-12-07T12:54:59Z');
      await provider.getCredentials();
      expect(served - before).toBe(1);
      now = Date.parse('2026-12-07T12:55:00Z');
      await provider.getCredentials();
      expect(served - before).toBe(2);
    });

    it('a refused request is an error naming the source, not an unsigned request', async () => {
      const provider = new MetadataCredentialProvider({ kind: 'container', url, authorization: 'wrong' });
      await expect(provider.getCredentials()).rejects.toThrow(
        /no S3 credentials from the container metadata service \(HTTP 403\)/,
      );
    });
  });
});
