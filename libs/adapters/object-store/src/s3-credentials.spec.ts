import { s3CredentialProblems, s3CredentialsFrom } from './s3-credentials';

describe('S3 credential sources', () => {
  it('MANGO_S3_* keys win over the AWS variables', () => {
    expect(
      s3CredentialsFrom({
        MANGO_S3_ACCESS_KEY: 'm',
        MANGO_S3_SECRET_KEY: 'ms',
        AWS_ACCESS_KEY_ID: 'a',
        AWS_SECRET_ACCESS_KEY: 'as',
      }),
    ).toEqual({ source: 'settings', accessKey: 'm', secretKey: 'ms' });
  });

  it('without them, AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN are read', () => {
    expect(
      s3CredentialsFrom({ AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'as', AWS_SESSION_TOKEN: 't' }),
    ).toEqual({ source: 'environment', accessKey: 'a', secretKey: 'as', sessionToken: 't' });
  });

  it('without keys: web identity, then the container endpoint, then the instance profile', () => {
    const container = {
      AWS_CONTAINER_CREDENTIALS_FULL_URI: 'http://127.0.0.1:9/creds',
      AWS_CONTAINER_AUTHORIZATION_TOKEN: 'tok',
    };
    expect(
      s3CredentialsFrom({
        AWS_WEB_IDENTITY_TOKEN_FILE: '/t',
        AWS_ROLE_ARN: 'arn:aws:iam::1:role/r',
        ...container,
      }),
    ).toEqual({ source: 'web_identity', chain: { kind: 'web_identity' } });
    expect(s3CredentialsFrom(container)).toEqual({
      source: 'container',
      chain: { kind: 'container', url: 'http://127.0.0.1:9/creds', authorization: 'tok' },
    });
    expect(s3CredentialsFrom({ AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: '/v2/credentials/x' }).chain).toEqual({
      kind: 'container',
      url: 'http://169.254.170.2/v2/credentials/x',
    });
    expect(s3CredentialsFrom({})).toEqual({
      source: 'instance',
      chain: { kind: 'instance', endpoint: 'http://169.254.169.254' },
    });
    expect(s3CredentialsFrom({ AWS_EC2_METADATA_SERVICE_ENDPOINT: 'http://127.0.0.1:1' }).chain).toEqual({
      kind: 'instance',
      endpoint: 'http://127.0.0.1:1',
    });
  });

  it('half a key pair, or a session token alone, is a configuration problem (never a silent fallback)', () => {
    expect(s3CredentialProblems({ MANGO_S3_ACCESS_KEY: 'm' })).toEqual([
      expect.stringMatching(/MANGO_S3_ACCESS_KEY and MANGO_S3_SECRET_KEY go together/),
    ]);
    expect(s3CredentialProblems({ AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't' })).toEqual([
      'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together',
      'AWS_SESSION_TOKEN needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
    ]);
    expect(s3CredentialProblems({ AWS_WEB_IDENTITY_TOKEN_FILE: '/t' })).toEqual([
      'AWS_WEB_IDENTITY_TOKEN_FILE needs AWS_ROLE_ARN (the role to assume)',
    ]);
    expect(s3CredentialProblems({})).toEqual([]);
  });
});
