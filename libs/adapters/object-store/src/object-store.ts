import { Client } from 'minio';

export interface ObjectStoreSettings {
  /** e.g. http://127.0.0.1:17070 */
  endpoint: string;
  accessKey: string;
  secretKey: string;
  region: string;
  bucket: string;
}

/** An S3-compatible object store (path-style) reached with the minio client. */
export class ObjectStore {
  readonly client: Client;
  /**
   * The same store, for requests whose body is a stream: never retried, because a stream cannot be sent
   * twice (a retried request would declare its Content-Length and send nothing).
   */
  readonly streamClient: Client;
  readonly bucket: string;

  constructor(private readonly settings: ObjectStoreSettings) {
    const url = new URL(settings.endpoint);
    const options = {
      endPoint: url.hostname,
      port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
      useSSL: url.protocol === 'https:',
      accessKey: settings.accessKey,
      secretKey: settings.secretKey,
      region: settings.region,
      pathStyle: true,
    };
    this.client = new Client(options);
    this.streamClient = new Client({ ...options, retryOptions: { disableRetry: true } });
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
