import { DomainError } from '@mango/domain-kernel';
import { parseCreateBody, parseHeartbeatQuery, parsePollQuery, parseStopBody } from './work-input';
import { decodeWorkSecret, encodeWorkSecret } from './work-secret';

describe('Work inputs', () => {
  it('poll: defaults, the worker id from query or header, and bounds', () => {
    expect(parsePollQuery({}, undefined)).toEqual({ blockMs: 0, reclaimOlderThanMs: 5000, workerId: null });
    expect(parsePollQuery({ block_ms: '30000', worker_id: 'q' }, 'h').workerId).toBe('q');
    expect(parsePollQuery({}, 'from-header').workerId).toBe('from-header');
    for (const bad of [
      { block_ms: '30001' },
      { block_ms: '-1' },
      { block_ms: '1.5' },
      { reclaim_older_than_ms: 'x' },
      { worker_id: 'w'.repeat(129) },
      { other: '1' },
    ]) {
      expect(() => parsePollQuery(bad, undefined)).toThrow(DomainError);
    }
  });

  it('heartbeat: NO_HEARTBEAT or an RFC 3339 echo, TTL 1–300', () => {
    expect(parseHeartbeatQuery({ expected_last_heartbeat: 'NO_HEARTBEAT' })).toEqual({
      expectedLastHeartbeat: 'NO_HEARTBEAT',
    });
    expect(
      parseHeartbeatQuery({ expected_last_heartbeat: '2026-01-01T00:00:00.000Z', desired_ttl_seconds: '300' })
        .desiredTtlSeconds,
    ).toBe(300);
    for (const bad of [
      {},
      { expected_last_heartbeat: 'soon' },
      { expected_last_heartbeat: 'NO_HEARTBEAT', desired_ttl_seconds: '0' },
      { expected_last_heartbeat: 'NO_HEARTBEAT', desired_ttl_seconds: '301' },
    ]) {
      expect(() => parseHeartbeatQuery(bad)).toThrow(DomainError);
    }
  });

  it('create accepts only {data:{type:"healthcheck"}}; stop takes an optional boolean force', () => {
    expect(() => parseCreateBody({ data: { type: 'healthcheck' } })).not.toThrow();
    expect(() => parseCreateBody({ data: { type: 'session', id: 'sesn_x' } })).toThrow(/Session input/);
    expect(() => parseCreateBody({ data: { type: 'healthcheck', id: 'x' } })).toThrow(/unknown field/);
    expect(parseStopBody(undefined)).toEqual({ force: false });
    expect(parseStopBody({ force: true })).toEqual({ force: true });
    expect(() => parseStopBody({ force: 1 })).toThrow(/boolean/);
  });

  it('the Work secret is URL-safe base64 JSON that round-trips', () => {
    const encoded = encodeWorkSecret({
      sessions_token: 'mango_wt_abc+/=',
      api_base_url: 'http://127.0.0.1:8080',
    });
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeWorkSecret(encoded)).toEqual({
      sessions_token: 'mango_wt_abc+/=',
      api_base_url: 'http://127.0.0.1:8080',
    });
  });
});
