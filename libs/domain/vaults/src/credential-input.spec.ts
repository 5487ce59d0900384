import {
  CredentialCreate,
  ENVIRONMENT_VARIABLE_REFUSAL,
  parseCredentialCreate,
  parseCredentialUpdate,
} from './credential-input';

const bearer = { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: 'tok-1' };
const oauth = {
  type: 'mcp_oauth',
  mcp_server_url: 'https://mcp.example.com/mcp',
  access_token: 'at-1',
  expires_at: '2026-12-01T12:00:00Z',
  refresh: {
    client_id: 'cid',
    refresh_token: 'rt-1',
    token_endpoint: 'https://auth.example.com/token',
    token_endpoint_auth: { type: 'client_secret_basic', client_secret: 'cs-1' },
    scope: 'tools:read',
  },
};

describe('parseCredentialCreate', () => {
  it('splits a static_bearer credential into public auth and secrets', () => {
    const c = parseCredentialCreate({ auth: bearer, display_name: 'prod', metadata: { a: 'b' } });
    expect(c).toEqual({
      displayName: 'prod',
      metadata: { a: 'b' },
      auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp' },
      urlKey: 'https://mcp.example.com/mcp',
      secrets: { token: 'tok-1' },
    });
    expect(JSON.stringify(c.auth)).not.toContain('tok-1');
  });

  it('splits an mcp_oauth credential; no secret appears in auth', () => {
    const c = parseCredentialCreate({ auth: oauth });
    expect(c.auth).toEqual({
      type: 'mcp_oauth',
      mcp_server_url: 'https://mcp.example.com/mcp',
      expires_at: '2026-12-01T12:00:00.000Z',
      refresh: {
        client_id: 'cid',
        token_endpoint: 'https://auth.example.com/token',
        token_endpoint_auth: { type: 'client_secret_basic' },
        resource: null,
        scope: 'tools:read',
      },
    });
    expect(c.secrets).toEqual({ access_token: 'at-1', refresh_token: 'rt-1', client_secret: 'cs-1' });
    for (const s of ['at-1', 'rt-1', 'cs-1']) expect(JSON.stringify(c.auth)).not.toContain(s);
  });

  it('defaults token_endpoint_auth to none and allows no refresh token', () => {
    const c = parseCredentialCreate({
      auth: { ...oauth, refresh: { client_id: 'c', token_endpoint: 'https://a/t' } },
    });
    expect(c.auth.type === 'mcp_oauth' && c.auth.refresh?.token_endpoint_auth).toEqual({ type: 'none' });
    expect(c.secrets).toEqual({ access_token: 'at-1' });
  });

  const bad: Array<[string, unknown, string]> = [
    ['no body object', 'x', 'body must be an object'],
    ['unknown top-level field', { auth: bearer, vault_id: 'v' }, 'body.vault_id: unknown field'],
    ['missing auth', {}, 'auth is required'],
    ['auth not an object', { auth: [] }, 'auth must be an object'],
    ['missing type', { auth: { mcp_server_url: 'https://h', token: 't' } }, 'auth.type is required'],
    [
      'unknown kind',
      { auth: { ...bearer, type: 'basic_auth' } },
      'auth.type must be one of: static_bearer, mcp_oauth',
    ],
    ['missing url', { auth: { type: 'static_bearer', token: 't' } }, 'auth.mcp_server_url is required'],
    ['bad url', { auth: { ...bearer, mcp_server_url: 'ftp://h' } }, 'absolute http or https URL'],
    ['url with user info', { auth: { ...bearer, mcp_server_url: 'https://u:p@h' } }, 'without user name'],
    [
      'missing token',
      { auth: { type: 'static_bearer', mcp_server_url: 'https://h' } },
      'auth.token is required',
    ],
    ['empty token', { auth: { ...bearer, token: '' } }, 'auth.token must not be empty'],
    ['huge token', { auth: { ...bearer, token: 'x'.repeat(16_385) } }, 'auth.token must have at most 16384'],
    ['oauth field on bearer', { auth: { ...bearer, access_token: 'a' } }, 'auth.access_token: unknown field'],
    [
      'missing access_token',
      { auth: { ...oauth, access_token: undefined } },
      'auth.access_token is required',
    ],
    ['bad expires_at', { auth: { ...oauth, expires_at: 'tomorrow' } }, 'auth.expires_at must be an RFC 3339'],
    [
      'refresh without client_id',
      { auth: { ...oauth, refresh: { token_endpoint: 'https://a' } } },
      'auth.refresh.client_id is required',
    ],
    [
      'refresh without endpoint',
      { auth: { ...oauth, refresh: { client_id: 'c' } } },
      'auth.refresh.token_endpoint is required',
    ],
    [
      'bad endpoint',
      { auth: { ...oauth, refresh: { client_id: 'c', token_endpoint: 'x' } } },
      'auth.refresh.token_endpoint must be',
    ],
    [
      'unknown endpoint auth',
      { auth: { ...oauth, refresh: { ...oauth.refresh, token_endpoint_auth: { type: 'private_key_jwt' } } } },
      'token_endpoint_auth.type must be one of: none, client_secret_basic, client_secret_post',
    ],
    [
      'basic without secret',
      {
        auth: {
          ...oauth,
          refresh: { ...oauth.refresh, token_endpoint_auth: { type: 'client_secret_post' } },
        },
      },
      'client_secret is required with type client_secret_post',
    ],
    [
      'none with secret',
      {
        auth: {
          ...oauth,
          refresh: { ...oauth.refresh, token_endpoint_auth: { type: 'none', client_secret: 's' } },
        },
      },
      'client_secret is not allowed with type none',
    ],
    [
      'display_name too long',
      { auth: bearer, display_name: 'x'.repeat(256) },
      'display_name must have at most 255',
    ],
    ['bad metadata', { auth: bearer, metadata: { a: 1 } }, 'metadata'],
    [
      'environment_variable with both injection flags false',
      {
        auth: {
          type: 'environment_variable',
          secret_name: 'API_KEY',
          secret_value: 'v',
          injection_location: { header: false, body: false },
        },
      },
      'at least one of header and body must be true',
    ],
    [
      'environment_variable with a partial location of false',
      {
        auth: {
          type: 'environment_variable',
          secret_name: 'K',
          secret_value: 'v',
          injection_location: { header: false },
        },
      },
      'at least one of header and body must be true',
    ],
    [
      'environment_variable without secret_name',
      { auth: { type: 'environment_variable', secret_value: 'v' } },
      'auth.secret_name is required',
    ],
    [
      'a valid environment_variable credential',
      { auth: { type: 'environment_variable', secret_name: 'API_KEY', secret_value: 'v' } },
      ENVIRONMENT_VARIABLE_REFUSAL,
    ],
  ];
  it.each(bad)('%s → 400', (_name, body, message) => {
    expect(() => parseCredentialCreate(body)).toThrow(message);
  });
});

describe('parseCredentialUpdate', () => {
  const stored = (c: CredentialCreate) => ({
    displayName: c.displayName,
    metadata: c.metadata,
    auth: c.auth,
    urlKey: c.urlKey,
    secrets: c.secrets,
  });
  const b = stored(parseCredentialCreate({ auth: bearer, display_name: 'd', metadata: { k: 'v' } }));
  const o = stored(parseCredentialCreate({ auth: oauth }));

  it('keeps everything when nothing is sent', () => {
    expect(parseCredentialUpdate(b, {})).toEqual({
      displayName: 'd',
      metadata: { k: 'v' },
      auth: b.auth,
      secrets: { token: 'tok-1' },
      secretsChanged: false,
    });
  });

  it('replaces a bearer token; a matching URL spelling is accepted', () => {
    const u = parseCredentialUpdate(b, {
      auth: { type: 'static_bearer', mcp_server_url: 'HTTPS://mcp.example.com:443/mcp/', token: 'tok-2' },
      display_name: null,
      metadata: { k: null },
    });
    expect(u).toEqual({
      displayName: null,
      metadata: {},
      auth: b.auth,
      secrets: { token: 'tok-2' },
      secretsChanged: true,
    });
  });

  it('patches the refresh configuration and replaces token_endpoint_auth whole', () => {
    const u = parseCredentialUpdate(o, {
      auth: {
        type: 'mcp_oauth',
        access_token: 'at-2',
        expires_at: null,
        refresh: { scope: null, token_endpoint_auth: { type: 'none' }, refresh_token: 'rt-2' },
      },
    });
    expect(u.auth).toEqual({
      ...o.auth,
      expires_at: null,
      refresh: { ...(o.auth as any).refresh, scope: null, token_endpoint_auth: { type: 'none' } },
    });
    expect(u.secrets).toEqual({ access_token: 'at-2', refresh_token: 'rt-2' });
    expect(u.secretsChanged).toBe(true);
  });

  it('refresh: null removes the refresh configuration and its secrets', () => {
    const u = parseCredentialUpdate(o, { auth: { type: 'mcp_oauth', refresh: null } });
    expect((u.auth as any).refresh).toBeNull();
    expect(u.secrets).toEqual({ access_token: 'at-1' });
  });

  describe('the refresh configuration a stored secret was issued for is immutable', () => {
    const withResource = stored(
      parseCredentialCreate({
        auth: { ...oauth, refresh: { ...oauth.refresh, resource: 'https://mcp.example.com/mcp' } },
      }),
    );
    it.each([
      [
        'token_endpoint',
        { token_endpoint: 'https://attacker.example/collect' },
        /auth\.refresh\.token_endpoint/,
      ],
      ['client_id', { client_id: 'other-client' }, /auth\.refresh\.client_id/],
      ['resource (set)', { resource: 'https://elsewhere.example/mcp' }, /auth\.refresh\.resource/],
      ['resource (cleared)', { resource: null }, /auth\.refresh\.resource/],
      [
        'token_endpoint even with new secrets',
        {
          token_endpoint: 'https://attacker.example/collect',
          refresh_token: 'rt-new',
          token_endpoint_auth: { type: 'client_secret_post', client_secret: 'cs-new' },
        },
        /auth\.refresh\.token_endpoint/,
      ],
    ])('changing %s → 400 naming the field', (_n, refresh, field) => {
      expect(() => parseCredentialUpdate(withResource, { auth: { type: 'mcp_oauth', refresh } })).toThrow(
        field,
      );
      expect(() => parseCredentialUpdate(withResource, { auth: { type: 'mcp_oauth', refresh } })).toThrow(
        /immutable/,
      );
    });

    it('names every changed field at once', () => {
      expect(() =>
        parseCredentialUpdate(withResource, {
          auth: { type: 'mcp_oauth', refresh: { token_endpoint: 'https://a.example/t', client_id: 'x' } },
        }),
      ).toThrow('auth.refresh.client_id, auth.refresh.token_endpoint');
    });

    it('the same values (a different spelling of the same URL) are accepted and change nothing', () => {
      const u = parseCredentialUpdate(withResource, {
        auth: {
          type: 'mcp_oauth',
          refresh: {
            token_endpoint: 'HTTPS://AUTH.example.com:443/token',
            client_id: 'cid',
            resource: 'https://mcp.example.com/mcp',
          },
        },
      });
      expect(u.auth).toEqual(withResource.auth);
      expect(u.secretsChanged).toBe(false);
    });

    it('after refresh: null removed the configuration and its secrets, a new one may name another endpoint', () => {
      const removed = parseCredentialUpdate(withResource, { auth: { type: 'mcp_oauth', refresh: null } });
      expect(removed.secrets).toEqual({ access_token: 'at-1' });
      const next = parseCredentialUpdate(
        { ...withResource, auth: removed.auth, secrets: removed.secrets },
        {
          auth: {
            type: 'mcp_oauth',
            refresh: {
              client_id: 'c2',
              token_endpoint: 'https://auth2.example.com/token',
              refresh_token: 'rt-2',
            },
          },
        },
      );
      expect((next.auth as any).refresh.token_endpoint).toBe('https://auth2.example.com/token');
      // Only what this request supplied is sent there: the old refresh token and client secret are gone.
      expect(next.secrets).toEqual({ access_token: 'at-1', refresh_token: 'rt-2' });
    });
  });

  it.each([
    ['changing the kind', b, { auth: { type: 'mcp_oauth', access_token: 'a' } }, 'auth.type cannot change'],
    [
      'changing the URL',
      b,
      { auth: { type: 'static_bearer', mcp_server_url: 'https://other/mcp' } },
      'auth.mcp_server_url is immutable',
    ],
    [
      'unknown field',
      b,
      { auth: { type: 'static_bearer', secret_name: 'x' } },
      'auth.secret_name: unknown field',
    ],
    ['empty token', b, { auth: { type: 'static_bearer', token: '' } }, 'auth.token must not be empty'],
    ['unknown top-level', o, { type: 'x' }, 'body.type: unknown field'],
    [
      'environment_variable',
      o,
      { auth: { type: 'environment_variable', secret_name: 'A', secret_value: 'v' } },
      'not supported',
    ],
  ])('%s → 400', (_n, current, body, message) => {
    expect(() => parseCredentialUpdate(current, body)).toThrow(message);
  });
});
