import { MangoClient } from './client';
import { polledWorkFixture } from './testing/fixtures';
import { json, TestServer } from './testing/test-server';
import { NO_HEARTBEAT } from './types';
import { decodeWorkSecret, encodeWorkSecret, InvalidWorkSecretError } from './work-secret';

const SECRET = { sessions_token: 'mango_wt_AbC-dEf_123', api_base_url: 'http://127.0.0.1:8080' };
const b64url = (text: string): string => Buffer.from(text, 'utf8').toString('base64url');

describe('decodeWorkSecret', () => {
  it('round-trips encodeWorkSecret', () => {
    expect(decodeWorkSecret(encodeWorkSecret(SECRET))).toEqual(SECRET);
  });

  it('decodes what Node produces as base64url, with and without padding', () => {
    // A payload whose length is not a multiple of 3, so padding matters, and which needs - and _.
    const payload = JSON.stringify({
      sessions_token: 'mango_wt_ÿ>>?x',
      api_base_url: 'https://mango.example/',
    });
    const unpadded = b64url(payload);
    expect(unpadded).toMatch(/[-_]/);
    const padded = unpadded + '='.repeat((4 - (unpadded.length % 4)) % 4);
    expect(padded).not.toBe(unpadded);
    expect(decodeWorkSecret(unpadded)).toEqual(JSON.parse(payload));
    expect(decodeWorkSecret(padded)).toEqual(JSON.parse(payload));
  });

  it('ignores unknown extra fields', () => {
    expect(decodeWorkSecret(b64url(JSON.stringify({ ...SECRET, extra: 1 })))).toEqual(SECRET);
  });

  it.each([
    ['an empty string', '', /non-empty string/],
    [
      'standard base64 characters',
      Buffer.from(JSON.stringify(SECRET)).toString('base64').replace(/=/g, '') + '+/',
      /URL-safe base64/,
    ],
    ['whitespace', `${encodeWorkSecret(SECRET)} `, /URL-safe base64/],
    ['an impossible length', 'abcde', /length or padding/],
    ['misplaced padding', 'ab=', /length or padding/],
    ['non-JSON payload', b64url('not json'), /not UTF-8 JSON/],
    ['invalid UTF-8', Buffer.from([0xff, 0xfe, 0xfd]).toString('base64url'), /not UTF-8 JSON/],
    ['a JSON array', b64url('[1,2]'), /not a JSON object/],
    ['a missing sessions_token', b64url(JSON.stringify({ api_base_url: 'http://x' })), /sessions_token/],
    ['an empty sessions_token', b64url(JSON.stringify({ ...SECRET, sessions_token: '' })), /sessions_token/],
    ['a missing api_base_url', b64url(JSON.stringify({ sessions_token: 't' })), /api_base_url/],
    [
      'a non-http api_base_url',
      b64url(JSON.stringify({ ...SECRET, api_base_url: 'file:///etc' })),
      /api_base_url/,
    ],
  ])('rejects %s with a clear InvalidWorkSecretError', (_label, input, message) => {
    let thrown: unknown;
    try {
      decodeWorkSecret(input);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InvalidWorkSecretError);
    expect((thrown as Error).message).toMatch(/^Invalid Work secret: /);
    expect((thrown as Error).message).toMatch(message);
  });

  it('rejects a non-string input', () => {
    expect(() => decodeWorkSecret(undefined as unknown as string)).toThrow(InvalidWorkSecretError);
  });

  describe('with withToken, end to end against a local server', () => {
    let server: TestServer;

    beforeEach(async () => {
      server = await TestServer.start();
    });

    afterEach(async () => {
      await server.close();
    });

    it('poll → decode secret → heartbeat and result with the Work token at api_base_url', async () => {
      const secret = encodeWorkSecret({ sessions_token: 'mango_wt_live', api_base_url: server.baseUrl });
      server.script(
        json(200, polledWorkFixture(secret, 'work_1')),
        json(200, { ...polledWorkFixture(secret, 'work_1'), secret: null, state: 'starting' }),
        json(200, {
          type: 'work_heartbeat',
          last_heartbeat: '2026-01-02T03:04:06.000Z',
          lease_extended: true,
          state: 'active',
          ttl_seconds: 60,
        }),
        json(200, { ...polledWorkFixture(secret, 'work_1'), secret: null, state: 'stopped' }),
      );
      const supervisor = new MangoClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'mango_ek_env' }).withToken(
        'mango_ek_env',
        { baseUrl: server.baseUrl },
      );
      const work = await supervisor.environments.work.poll('env_1', { worker_id: 'w1' });
      expect(work).not.toBeNull();
      await supervisor.environments.work.ack('env_1', work!.id);
      const { sessions_token, api_base_url } = decodeWorkSecret(work!.secret);
      const worker = supervisor.withToken(sessions_token, { baseUrl: api_base_url });
      const beat = await worker.environments.work.heartbeat('env_1', work!.id, {
        expected_last_heartbeat: NO_HEARTBEAT,
      });
      await worker.environments.work.result('env_1', work!.id, { status: 'succeeded', message: 'ok' });
      expect(beat.lease_extended).toBe(true);
      expect(server.requests.map((r) => r.headers.authorization)).toEqual([
        'Bearer mango_ek_env',
        'Bearer mango_ek_env',
        'Bearer mango_wt_live',
        'Bearer mango_wt_live',
      ]);
    });
  });
});
