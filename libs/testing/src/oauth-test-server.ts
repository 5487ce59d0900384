import { randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import OAuth2Server from '@node-oauth/oauth2-server';

/**
 * A real OAuth 2.0 authorization server for tests: `@node-oauth/oauth2-server` (a maintained provider
 * library) serving the token endpoint `POST /token` with the refresh_token grant, short-lived access
 * tokens and refresh-token rotation, over an in-memory model. `issue()` seeds a grant as if a user had
 * authorised earlier. Counts every refresh grant it answers. `hold()` makes it a slow token endpoint
 * without a clock: token requests that arrive wait at a gate until `release()` (`untilHeld(n)` resolves
 * once n of them wait), so a test can act while refreshes are in flight.
 */
export interface OAuthTestServer {
  url: string;
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string;
  issue(): Promise<{ access_token: string; refresh_token: string }>;
  isValid(accessToken: string): boolean;
  revokeAccess(accessToken: string): void;
  revokeRefresh(refreshToken: string): void;
  refreshGrants(): number;
  /** Every request that reached the token endpoint (answered or still held). */
  tokenRequests(): number;
  /** From now on token requests wait at the gate until `release()`. */
  hold(): void;
  /** Lets every held request (and later ones) through. */
  release(): void;
  /** Resolves once `n` token requests are waiting at the gate. */
  untilHeld(n: number): Promise<void>;
  close(): Promise<void>;
}

interface StoredToken {
  accessToken: string;
  accessTokenExpiresAt: Date;
  refreshToken?: string;
  refreshTokenExpiresAt?: Date;
  scope?: string[];
  client: { id: string; grants: string[] };
  user: { id: string };
}

export async function startOAuthTestServer(opts: {
  accessTokenLifetime: number;
  clientId?: string;
  clientSecret?: string;
}): Promise<OAuthTestServer> {
  const clientId = opts.clientId ?? 'mango-test-client';
  const clientSecret = opts.clientSecret ?? `cs-${randomBytes(8).toString('hex')}`;
  const client = { id: clientId, grants: ['refresh_token'] };
  const byAccess = new Map<string, StoredToken>();
  const byRefresh = new Map<string, StoredToken>();
  let grants = 0;
  let requests = 0;
  let held = false;
  const gate: Array<() => void> = [];
  const watchers: Array<{ n: number; resolve: () => void }> = [];
  const notify = () => {
    for (const w of [...watchers])
      if (gate.length >= w.n) {
        watchers.splice(watchers.indexOf(w), 1);
        w.resolve();
      }
  };
  const model = {
    getClient: async (id: string, secret: string | null) =>
      id === clientId && (secret === null || secret === clientSecret) ? client : null,
    saveToken: async (token: StoredToken, c: StoredToken['client'], user: StoredToken['user']) => {
      const saved = { ...token, client: c, user };
      byAccess.set(token.accessToken, saved);
      if (token.refreshToken) byRefresh.set(token.refreshToken, saved);
      return saved;
    },
    getAccessToken: async (t: string) => byAccess.get(t) ?? null,
    getRefreshToken: async (t: string) => {
      const found = byRefresh.get(t);
      return found ? { ...found, refreshToken: t } : null;
    },
    revokeToken: async (t: { refreshToken: string }) => {
      grants += 1;
      return byRefresh.delete(t.refreshToken);
    },
  };
  const oauth = new OAuth2Server({
    model: model as never,
    accessTokenLifetime: opts.accessTokenLifetime,
    alwaysIssueNewRefreshToken: true,
    requireClientAuthentication: { refresh_token: true },
  });
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += String(d)));
    req.on('end', async () => {
      requests += 1;
      if (held) {
        await new Promise<void>((resolve) => {
          gate.push(resolve);
          notify();
        });
      }
      const request = new OAuth2Server.Request({
        method: req.method ?? 'GET',
        headers: req.headers as Record<string, string>,
        query: {},
        body: Object.fromEntries(new URLSearchParams(raw)),
      });
      const response = new OAuth2Server.Response({ headers: {} });
      try {
        if (req.url !== '/token') throw Object.assign(new Error('not found'), { code: 404 });
        await oauth.token(request, response);
      } catch (e) {
        const err = e as { code?: number; name?: string; message?: string };
        response.status = err.code ?? 500;
        response.body = { error: err.name ?? 'server_error', error_description: err.message };
      }
      res.writeHead(response.status ?? 200, {
        'content-type': 'application/json',
        ...(response.headers ?? {}),
      });
      res.end(JSON.stringify(response.body ?? {}));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    tokenEndpoint: `${url}/token`,
    clientId,
    clientSecret,
    issue: async () => {
      const t = {
        accessToken: `at-${randomBytes(12).toString('hex')}`,
        accessTokenExpiresAt: new Date(Date.now() + opts.accessTokenLifetime * 1000),
        refreshToken: `rt-${randomBytes(12).toString('hex')}`,
        refreshTokenExpiresAt: new Date(Date.now() + 3600_000),
        client,
        user: { id: 'user-1' },
      };
      await model.saveToken(t, client, t.user);
      return { access_token: t.accessToken, refresh_token: t.refreshToken };
    },
    isValid: (t) => {
      const found = byAccess.get(t);
      return !!found && found.accessTokenExpiresAt.getTime() > Date.now();
    },
    revokeAccess: (t) => void byAccess.delete(t),
    revokeRefresh: (t) => void byRefresh.delete(t),
    refreshGrants: () => grants,
    tokenRequests: () => requests,
    hold: () => void (held = true),
    release: () => {
      held = false;
      for (const open of gate.splice(0)) open();
    },
    untilHeld: (n) =>
      new Promise<void>((resolve) => {
        watchers.push({ n, resolve });
        notify();
      }),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
