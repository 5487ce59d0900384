import { request } from 'node:http';
import { decodeWorkSecret } from '@mango/feature-work';
import { answers, freePort, httpClient, startApp } from '@mango/testing';
import { ApiUnderTest, startApi } from './support';

/**
 * Behind a TLS ingress (docs/operator-guide.md "Public base URL and proxies"): the base URL a Work secret
 * gives the worker comes from configuration only — MANGO_PUBLIC_BASE_URL, or in development the API's own
 * listen address — never from the request's Host or X-Forwarded-* headers, which the caller controls.
 * Outside development the API refuses to start without an https public base URL. X-Forwarded-For/-Proto
 * are believed only from MANGO_TRUSTED_PROXIES.
 */

/** GET with headers fetch() will not send as given (Host). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += String(d)));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

const FORGED = {
  host: 'attacker.example',
  'x-forwarded-host': 'attacker.example',
  'x-forwarded-proto': 'https',
  'x-forwarded-for': '203.0.113.7',
};

async function pollSecret(api: ApiUnderTest) {
  const ws = httpClient(api.url, (await api.issueKey('wrkspc_default')).api_key);
  const envId = (await ws.post('/v1/environments', { name: `pool-${Date.now()}` })).body.id as string;
  const supervisorKey = (await api.issueKey('wrkspc_default', envId)).api_key;
  await ws.post(`/v1/environments/${envId}/work`, { data: { type: 'healthcheck' } });
  const polled = await rawGet(`${api.url}/v1/environments/${envId}/work/poll`, {
    ...FORGED,
    authorization: `Bearer ${supervisorKey}`,
  });
  expect(polled.status).toBe(200);
  return decodeWorkSecret(polled.body.secret);
}

describe('the public base URL and forwarded headers (real apps/api processes)', () => {
  it('a Work secret names MANGO_PUBLIC_BASE_URL whatever Host and X-Forwarded-* the Poll carries', async () => {
    const api = await startApi('pburl', {
      MANGO_PUBLIC_BASE_URL: 'https://mango.example.com',
      MANGO_TRUSTED_PROXIES: 'loopback',
    });
    try {
      expect((await pollSecret(api)).api_base_url).toBe('https://mango.example.com');
    } finally {
      await api.close();
    }
  });

  it('in development without MANGO_PUBLIC_BASE_URL, a Work secret names the listen address, never the Host header', async () => {
    const api = await startApi('pburl-dev', { MANGO_ENV: 'development' });
    try {
      expect((await pollSecret(api)).api_base_url).toBe(api.url);
    } finally {
      await api.close();
    }
  });

  it('X-Forwarded-For and -Proto are believed from trusted proxies only', async () => {
    const trusting = await startApi('pburl-trust', {
      MANGO_TRUSTED_PROXIES: 'loopback',
      MANGO_LOG_LEVEL: 'info',
    });
    const plain = await startApi('pburl-plain', { MANGO_LOG_LEVEL: 'info' });
    try {
      for (const api of [trusting, plain]) {
        const res = await rawGet(`${api.url}/healthz`, FORGED);
        expect(res.status).toBe(200);
      }
      const line = (logs: string) =>
        logs
          .split('\n')
          .filter((l) => l.includes('"path":"/healthz"'))
          .map((l) => JSON.parse(l) as { client_ip?: string; protocol?: string })
          .at(-1);
      expect(line(trusting.app.logs())).toMatchObject({ client_ip: '203.0.113.7', protocol: 'https' });
      expect(line(plain.app.logs())).toMatchObject({ client_ip: '127.0.0.1', protocol: 'http' });
    } finally {
      await trusting.close();
      await plain.close();
    }
  });

  const refusal = async (env: Record<string, string>): Promise<string> => {
    const port = await freePort();
    const started = startApp(
      'apps/api/src/main.ts',
      { MANGO_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', MANGO_API_PORT: String(port), ...env },
      answers(`http://127.0.0.1:${port}/healthz`),
      60_000,
    );
    const err = await started.then(
      () => new Error('started'),
      (e: Error) => e,
    );
    expect(err.message).toMatch(/exited with 2 during start-up/);
    return err.message;
  };

  it('outside development the API refuses to start without MANGO_PUBLIC_BASE_URL, naming every bad setting at once', async () => {
    const out = await refusal({
      MANGO_ENV: 'production',
      MANGO_TRUSTED_PROXIES: 'not-an-address',
      MANGO_TEMPORAL_ADDRESS: '127.0.0.1:7233',
      MANGO_TEMPORAL_TLS_CERT_FILE: '/nonexistent/client.crt',
      MANGO_TEMPORAL_TLS: 'off',
      MANGO_TEMPORAL_API_KEY: 'temporal-key-must-not-be-printed',
    });
    expect(out).toMatch(/MANGO_PUBLIC_BASE_URL is required outside development/);
    expect(out).toMatch(/MANGO_TRUSTED_PROXIES/);
    expect(out).toMatch(/MANGO_TEMPORAL_TLS_CERT_FILE and MANGO_TEMPORAL_TLS_KEY_FILE go together/);
    expect(out).toMatch(/API key would be sent in plaintext/);
    expect(out).not.toContain('temporal-key-must-not-be-printed');
  });

  it('outside development an http:// public base URL is refused unless it is a loopback address', async () => {
    const out = await refusal({ MANGO_ENV: 'production', MANGO_PUBLIC_BASE_URL: 'http://mango.example.com' });
    expect(out).toMatch(/MANGO_PUBLIC_BASE_URL must be https:\/\/ outside development/);
  });
});
