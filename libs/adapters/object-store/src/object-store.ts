import { Client, IamAwsProvider } from 'minio';
import { MetadataCredentialProvider } from './metadata-credentials';
import type { CredentialChainSource } from './s3-credentials';

export interface ObjectStoreSettings {
  /** e.g. http://127.0.0.1:17070 */
  endpoint: string;
  /**
   * Static keys (with `secretKey`, and `sessionToken` for temporary ones). Without them the minio client's
   * IamAwsProvider finds credentials: web identity, container endpoint, instance profile (s3-credentials.ts).
   */
  accessKey?: string;
  secretKey?: string;
  sessionToken?: string;
  /** Without keys: where temporary credentials come from (`s3CredentialsFrom`); default the instance profile. */
  chain?: CredentialChainSource;
  region: string;
  bucket: string;
  /**
   * How streamed writes protect their body: `signed` (default) — its SHA-256 is signed over http, its
   * Content-MD5 sent over https, so the store verifies every byte; `unsigned` — UNSIGNED-PAYLOAD and no
   * checksum, leaving integrity in transit to TLS or the network (saves hashing the bytes here and
   * verifying them in the store).
   */
  payloadSigning?: 'signed' | 'unsigned';
}

/** What a streamed write computes over its body: see ObjectStoreSettings.payloadSigning. */
export type PayloadChecksum = 'sha256' | 'md5' | 'none';

/** An S3-compatible object store (path-style) reached with the minio client. */
export class ObjectStore {
  readonly client: Client;
  /**
   * The same store, for requests whose body is a stream: never retried, because a stream cannot be sent
   * twice (a retried request would declare its Content-Length and send nothing).
   */
  readonly streamClient: Client;
  readonly bucket: string;
  /** What `streamClient` requests must carry about their body. */
  readonly payloadChecksum: PayloadChecksum;

  constructor(private readonly settings: ObjectStoreSettings) {
    const url = new URL(settings.endpoint);
    const options = {
      endPoint: url.hostname,
      port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
      useSSL: url.protocol === 'https:',
      ...(settings.accessKey
        ? {
            accessKey: settings.accessKey,
            secretKey: settings.secretKey,
            sessionToken: settings.sessionToken,
          }
        : // One provider for both clients: it caches the credentials and refreshes them before expiry.
          { credentialsProvider: chainProvider(settings.chain ?? { kind: 'instance', endpoint: IMDS }) }),
      region: settings.region,
      pathStyle: true,
    };
    this.client = new Client(options);
    this.streamClient = new Client({ ...options, retryOptions: { disableRetry: true } });
    if (settings.payloadSigning === 'unsigned') {
      // minio signs UNSIGNED-PAYLOAD when it believes the connection is https; the body is then unhashed.
      (this.streamClient as unknown as { enableSHA256: boolean }).enableSHA256 = false;
      this.payloadChecksum = 'none';
    } else {
      this.payloadChecksum = this.client.enableSHA256 ? 'sha256' : 'md5';
    }
    this.bucket = settings.bucket;
  }

  /** Creates the bucket if it does not exist (idempotent, safe with concurrent callers). */
  async ensureBucket(): Promise<void> {
    if (await this.client.bucketExists(this.bucket)) return;
    try {
      await this.client.makeBucket(this.bucket, this.settings.region);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw e;
    }
  }

  /**
   * The multipart uploads begun and neither completed nor aborted under `prefix`, sorted by key. The
   * client lists each upload's parts too; an upload that finishes or is aborted between the two calls
   * makes the second fail with NoSuchUpload, so the listing starts again (a few times) in that case.
   */
  async unfinishedUploads(prefix = ''): Promise<{ key: string; uploadId: string }[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        const uploads: { key: string; uploadId: string }[] = [];
        for await (const u of this.client.listIncompleteUploads(this.bucket, prefix, true))
          uploads.push({ key: u.key, uploadId: u.uploadId });
        return uploads.sort((a, b) => a.key.localeCompare(b.key));
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (
          attempt >= 5 ||
          (code !== 'NoSuchUpload' && !/multipart upload does not exist/i.test(String(err)))
        )
          throw err;
      }
    }
  }

  /** Bounded reachability check for readiness probes. */
  async ping(timeoutMs = 2000): Promise<'ok' | 'unreachable' | 'timeout'> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      return await Promise.race([
        this.client.bucketExists(this.bucket).then((ok) => (ok ? ('ok' as const) : ('unreachable' as const))),
        timeout,
      ]);
    } catch {
      return 'unreachable';
    } finally {
      clearTimeout(timer);
    }
  }
}

const IMDS = 'http://169.254.169.254';

/** The minio credential provider of a chain source. */
function chainProvider(source: CredentialChainSource): IamAwsProvider | MetadataCredentialProvider {
  // minio's IamAwsProvider reads AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN and AWS_REGION and asks AWS STS.
  if (source.kind === 'web_identity') return new IamAwsProvider({});
  return new MetadataCredentialProvider(source);
}
