import { IsOptional, IsString, IsUrl, Matches, MinLength } from 'class-validator';
import { ConfigRules } from '@mango/platform-config';

/**
 * Where the object store's credentials come from (docs/operator-guide.md "Object storage credentials"),
 * first match wins, as in the AWS SDKs' default chain: MANGO_S3_ACCESS_KEY/MANGO_S3_SECRET_KEY; the
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN) variables; web identity
 * (AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN: EKS IRSA, through minio's IamAwsProvider and AWS STS); the
 * container credentials endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI, with
 * AWS_CONTAINER_AUTHORIZATION_TOKEN: ECS, EKS Pod Identity); the instance profile (IMDSv2 at
 * AWS_EC2_METADATA_SERVICE_ENDPOINT, default http://169.254.169.254). Temporary credentials are
 * refreshed before they expire.
 */
export interface S3CredentialSettings {
  MANGO_S3_ACCESS_KEY?: string;
  MANGO_S3_SECRET_KEY?: string;
  AWS_ACCESS_KEY_ID?: string;
  AWS_SECRET_ACCESS_KEY?: string;
  AWS_SESSION_TOKEN?: string;
  AWS_WEB_IDENTITY_TOKEN_FILE?: string;
  AWS_ROLE_ARN?: string;
  AWS_CONTAINER_CREDENTIALS_FULL_URI?: string;
  AWS_CONTAINER_CREDENTIALS_RELATIVE_URI?: string;
  AWS_CONTAINER_AUTHORIZATION_TOKEN?: string;
  AWS_EC2_METADATA_SERVICE_ENDPOINT?: string;
}

/** A source of temporary credentials, asked at run time (see ObjectStoreSettings.chain). */
export type CredentialChainSource =
  | { kind: 'web_identity' }
  | { kind: 'container'; url: string; authorization?: string }
  | { kind: 'instance'; endpoint: string };

/** What ObjectStore takes: static keys, or the chain's source. `source` says which, for logs. */
export interface S3Credentials {
  source: 'settings' | 'environment' | CredentialChainSource['kind'];
  accessKey?: string;
  secretKey?: string;
  sessionToken?: string;
  chain?: CredentialChainSource;
}

/** The ECS agent's address for AWS_CONTAINER_CREDENTIALS_RELATIVE_URI. */
const ECS_CREDENTIALS_HOST = 'http://169.254.170.2';
const IMDS = 'http://169.254.169.254';

/** Which source the settings select (see S3CredentialSettings). Never reads a file or the network. */
export function s3CredentialsFrom(s: S3CredentialSettings): S3Credentials {
  if (s.MANGO_S3_ACCESS_KEY && s.MANGO_S3_SECRET_KEY)
    return { source: 'settings', accessKey: s.MANGO_S3_ACCESS_KEY, secretKey: s.MANGO_S3_SECRET_KEY };
  if (s.AWS_ACCESS_KEY_ID && s.AWS_SECRET_ACCESS_KEY)
    return {
      source: 'environment',
      accessKey: s.AWS_ACCESS_KEY_ID,
      secretKey: s.AWS_SECRET_ACCESS_KEY,
      ...(s.AWS_SESSION_TOKEN ? { sessionToken: s.AWS_SESSION_TOKEN } : {}),
    };
  if (s.AWS_WEB_IDENTITY_TOKEN_FILE) return { source: 'web_identity', chain: { kind: 'web_identity' } };
  const containerUrl =
    s.AWS_CONTAINER_CREDENTIALS_FULL_URI ??
    (s.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
      ? new URL(s.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, ECS_CREDENTIALS_HOST).toString()
      : undefined);
  if (containerUrl)
    return {
      source: 'container',
      chain: {
        kind: 'container',
        url: containerUrl,
        ...(s.AWS_CONTAINER_AUTHORIZATION_TOKEN
          ? { authorization: s.AWS_CONTAINER_AUTHORIZATION_TOKEN }
          : {}),
      },
    };
  return {
    source: 'instance',
    chain: { kind: 'instance', endpoint: s.AWS_EC2_METADATA_SERVICE_ENDPOINT ?? IMDS },
  };
}

/** Half a key pair is a mistake, not a request for the default chain. */
export function s3CredentialProblems(s: S3CredentialSettings): string[] {
  const problems: string[] = [];
  if (!s.MANGO_S3_ACCESS_KEY !== !s.MANGO_S3_SECRET_KEY)
    problems.push(
      'MANGO_S3_ACCESS_KEY and MANGO_S3_SECRET_KEY go together (or set neither for the default credential chain)',
    );
  if (!s.AWS_ACCESS_KEY_ID !== !s.AWS_SECRET_ACCESS_KEY)
    problems.push('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together');
  if (s.AWS_SESSION_TOKEN && !s.AWS_ACCESS_KEY_ID)
    problems.push('AWS_SESSION_TOKEN needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  if (s.AWS_WEB_IDENTITY_TOKEN_FILE && !s.AWS_ROLE_ARN)
    problems.push('AWS_WEB_IDENTITY_TOKEN_FILE needs AWS_ROLE_ARN (the role to assume)');
  return problems;
}

type EnvClass = new (...args: any[]) => object;

/** The object store's credential settings, mixed into the env DTO of every app that reaches S3. */
export function withS3CredentialsEnv<T extends EnvClass>(Base: T) {
  @ConfigRules<S3CredentialSettings>(s3CredentialProblems)
  class S3CredentialsEnv extends Base implements S3CredentialSettings {
    /** Static S3 keys; unset (with MANGO_S3_SECRET_KEY): the AWS variables or the default chain. */
    @IsOptional()
    @IsString()
    @MinLength(1)
    MANGO_S3_ACCESS_KEY?: string;

    @IsOptional()
    @IsString()
    @MinLength(1)
    MANGO_S3_SECRET_KEY?: string;

    /** The standard AWS variables, used when MANGO_S3_ACCESS_KEY is unset. */
    @IsOptional()
    @IsString()
    @MinLength(1)
    AWS_ACCESS_KEY_ID?: string;

    @IsOptional()
    @IsString()
    @MinLength(1)
    AWS_SECRET_ACCESS_KEY?: string;

    @IsOptional()
    @IsString()
    @MinLength(1)
    AWS_SESSION_TOKEN?: string;

    /** Web identity (EKS IRSA): the projected token file and the role (read by minio's IamAwsProvider, with AWS_REGION). */
    @IsOptional()
    @IsString()
    @MinLength(1)
    AWS_WEB_IDENTITY_TOKEN_FILE?: string;

    @IsOptional()
    @IsString()
    @MinLength(1)
    AWS_ROLE_ARN?: string;

    /** The container credentials endpoint (ECS, EKS Pod Identity), set by the platform. */
    @IsOptional()
    @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
    AWS_CONTAINER_CREDENTIALS_FULL_URI?: string;

    @IsOptional()
    @Matches(/^\/\S*$/, { message: 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI must be a path' })
    AWS_CONTAINER_CREDENTIALS_RELATIVE_URI?: string;

    @IsOptional()
    @IsString()
    AWS_CONTAINER_AUTHORIZATION_TOKEN?: string;

    /** The instance metadata service (default http://169.254.169.254). */
    @IsOptional()
    @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
    AWS_EC2_METADATA_SERVICE_ENDPOINT?: string;
  }
  return S3CredentialsEnv;
}
