import { CredentialProvider } from 'minio/dist/main/CredentialProvider.js';
import { Credentials } from 'minio/dist/main/Credentials.js';

/** Where temporary credentials are served: a container credentials endpoint (ECS, EKS Pod Identity) or IMDSv2. */
export type MetadataSource =
  { kind: 'container'; url: string; authorization?: string } | { kind: 'instance'; endpoint: string };

/** Credentials are fetched again this long before they expire. */
const REFRESH_BEFORE_MS = 5 * 60_000;
const REQUEST_TIMEOUT_MS = 5_000;

/**
 * Temporary credentials from the container credentials endpoint or the EC2 instance metadata service
 * (IMDSv2: a session token, the role's name, the role's credentials), cached until five minutes before
 * they expire; concurrent requests share one fetch. A minio CredentialProvider, so the client asks it
 * before each request. minio 8.0.7's own IamAwsProvider covers these two sources too but reads
 * `AccessKeyID` from their answer, where AWS sends `AccessKeyId` (it signs with an undefined key); its
 * web-identity source is right and is used as is (s3-credentials.ts).
 */
export class MetadataCredentialProvider extends CredentialProvider {
  private cached?: { credentials: Credentials; refreshAt: number };
  private pending?: Promise<Credentials>;

  constructor(
    private readonly source: MetadataSource,
    private readonly now: () => number = Date.now,
  ) {
    super({ accessKey: '', secretKey: '' });
  }

  override async getCredentials(): Promise<Credentials> {
    if (this.cached && this.now() < this.cached.refreshAt) return this.cached.credentials;
    this.pending ??= this.fetchCredentials().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async fetchCredentials(): Promise<Credentials> {
    const { url, headers } = await this.credentialsRequest();
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const body = (await res.json().catch(() => ({}))) as Record<string, string | undefined>;
    if (!res.ok || !body.AccessKeyId || !body.SecretAccessKey)
      throw new Error(
        `no S3 credentials from the ${this.source.kind} metadata service (HTTP ${res.status}${body.Code ? `, ${body.Code}` : ''})`,
      );
    const credentials = new Credentials({
      accessKey: body.AccessKeyId,
      secretKey: body.SecretAccessKey,
      ...(body.Token ? { sessionToken: body.Token } : {}),
    });
    const expiresAt = body.Expiration ? Date.parse(body.Expiration) : NaN;
    this.cached = {
      credentials,
      refreshAt: Number.isFinite(expiresAt) ? expiresAt - REFRESH_BEFORE_MS : this.now(),
    };
    return credentials;
  }

  private async credentialsRequest(): Promise<{ url: string; headers: Record<string, string> }> {
    if (this.source.kind === 'container')
      return {
        url: this.source.url,
        headers: this.source.authorization ? { authorization: this.source.authorization } : {},
      };
    const base = this.source.endpoint.replace(/\/+$/, '');
    const token = await text(`${base}/latest/api/token`, {
      method: 'PUT',
      headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '21600' },
    });
    const headers = { 'x-aws-ec2-metadata-token': token };
    const roles = await text(`${base}/latest/meta-data/iam/security-credentials/`, { headers });
    const role = roles.split(/\r?\n/)[0]?.trim();
    if (!role) throw new Error('no IAM role is attached to this instance');
    return { url: `${base}/latest/meta-data/iam/security-credentials/${encodeURIComponent(role)}`, headers };
  }
}

async function text(url: string, init: RequestInit): Promise<string> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  if (!res.ok) throw new Error(`instance metadata service: HTTP ${res.status} for ${new URL(url).pathname}`);
  return res.text();
}
