import { DomainError } from '@mango/domain-kernel';
import { parseCidrList } from './address';
import { webhookTypesForSessionEvent } from './event-types';
import { retryDelayMs, WEBHOOK_MAX_ATTEMPTS } from './retry';
import { parseWebhookCreate, parseWebhookUpdate } from './webhook-input';

const none = parseCidrList('');
const loopback = parseCidrList('127.0.0.0/8,::1/128');
const ok = { url: 'https://hooks.example.com/mango', event_types: ['session.created'] };

const message = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    if (e instanceof DomainError) return e.message;
    throw e;
  }
  throw new Error('expected a refusal');
};

describe('webhook input', () => {
  it('accepts a minimal create and normalises the URL', () => {
    expect(parseWebhookCreate(ok, none)).toEqual({
      url: 'https://hooks.example.com/mango',
      eventTypes: ['session.created'],
      description: null,
      metadata: {},
    });
  });

  it.each<[string, unknown, RegExp]>([
    ['no url', { event_types: ['session.created'] }, /url is required/],
    ['no event_types', { url: ok.url }, /event_types is required/],
    ['a relative url', { ...ok, url: '/hook' }, /absolute URL/],
    ['an ftp url', { ...ok, url: 'ftp://example.com/x' }, /http or https/],
    ['userinfo', { ...ok, url: 'https://u:p@example.com/' }, /credentials/],
    ['a fragment', { ...ok, url: 'https://example.com/#x' }, /fragment/],
    ['a loopback literal', { ...ok, url: 'http://127.0.0.1:9/x' }, /loopback/],
    ['localhost', { ...ok, url: 'http://localhost:9/x' }, /loopback/],
    ['a private literal', { ...ok, url: 'http://10.0.0.8/x' }, /private/],
    ['an IPv6 link-local literal', { ...ok, url: 'http://[fe80::1]/x' }, /link_local/],
    ['the metadata address', { ...ok, url: 'http://169.254.169.254/latest' }, /metadata/],
    ['an empty event_types', { ...ok, event_types: [] }, /at least 1/],
    ['an unknown type', { ...ok, event_types: ['session.exploded'] }, /unknown event type/],
    ['a type Mango does not emit', { ...ok, event_types: ['agent.deleted'] }, /does not emit/],
    [
      'deployment.deleted (no DELETE exists)',
      { ...ok, event_types: ['deployment.deleted'] },
      /does not emit/,
    ],
    ['a duplicate type', { ...ok, event_types: ['session.created', 'session.created'] }, /twice/],
    ['a non-string type', { ...ok, event_types: [3] }, /must be a string/],
    ['an unknown field', { ...ok, secret: 'whsec_x' }, /unknown field/],
    ['a long description', { ...ok, description: 'x'.repeat(513) }, /at most 512/],
    ['bad metadata', { ...ok, metadata: { a: 1 } }, /metadata.a must be a string/],
  ])('refuses %s', (_label, body, re) => {
    expect(message(() => parseWebhookCreate(body, none))).toMatch(re);
  });

  it('lets the operator allowlist open loopback for tests, but never the metadata address', () => {
    expect(parseWebhookCreate({ ...ok, url: 'http://127.0.0.1:9/x' }, loopback).url).toBe(
      'http://127.0.0.1:9/x',
    );
    expect(parseWebhookCreate({ ...ok, url: 'http://[::1]:9/x' }, loopback).url).toBe('http://[::1]:9/x');
    expect(message(() => parseWebhookCreate({ ...ok, url: 'http://10.0.0.1/' }, loopback))).toMatch(
      /private/,
    );
  });

  it('an allowlist entry with a port opens that port only (a URL without a port is 80/443)', () => {
    const ported = parseCidrList('10.0.0.5:8443,10.0.0.6:443');
    expect(parseWebhookCreate({ ...ok, url: 'https://10.0.0.5:8443/x' }, ported).url).toBe(
      'https://10.0.0.5:8443/x',
    );
    expect(parseWebhookCreate({ ...ok, url: 'https://10.0.0.6/x' }, ported).url).toBe('https://10.0.0.6/x');
    expect(message(() => parseWebhookCreate({ ...ok, url: 'https://10.0.0.5:9443/x' }, ported))).toMatch(
      /private/,
    );
    expect(message(() => parseWebhookCreate({ ...ok, url: 'http://10.0.0.6/x' }, ported))).toMatch(/private/);
    expect(message(() => parseWebhookCreate({ ...ok, url: 'http://localhost:8080/' }, ported))).toMatch(
      /loopback/,
    );
  });

  it('reads updates field by field', () => {
    expect(parseWebhookUpdate({ disabled: true }, none)).toEqual({ disabled: true });
    expect(message(() => parseWebhookUpdate({ disabled: 'yes' }, none))).toMatch(/boolean/);
    expect(message(() => parseWebhookUpdate({ event_types: [] }, none))).toMatch(/at least 1/);
  });
});

describe('session events → webhook types', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['session.status_running', {}, ['session.status_run_started']],
    ['session.status_idle', { stop_reason: { type: 'end_turn' } }, ['session.status_idled']],
    [
      'session.status_idle',
      { stop_reason: { type: 'requires_action' } },
      ['session.status_idled', 'session.requires_action'],
    ],
    [
      'session.status_idle',
      { stop_reason: { type: 'budget_reached' } },
      ['session.status_idled', 'session.budget_reached'],
    ],
    ['session.status_terminated', {}, ['session.status_terminated']],
    ['session.status_rescheduled', {}, ['session.status_rescheduled']],
    ['session.updated', { title: 't' }, ['session.updated']],
    ['session.deleted', {}, ['session.deleted']],
    ['session.thread_created', {}, ['session.thread_created']],
    ['session.thread_status_idle', { stop_reason: { type: 'end_turn' } }, ['session.thread_idled']],
    ['session.thread_status_terminated', {}, ['session.thread_terminated']],
    ['session.thread_status_running', {}, []],
    ['user.message', {}, []],
    ['agent.message', {}, []],
  ])('%s %j → %j', (type, body, out) => expect(webhookTypesForSessionEvent(type, body)).toEqual(out));
});

describe('retry schedule', () => {
  it('makes three attempts', () => expect(WEBHOOK_MAX_ATTEMPTS).toBe(3));

  it.each<[number, number, number]>([
    [1, 0, 5_000],
    [1, 0.5, 7_500],
    [1, 0.999999, 10_000],
    [2, 0, 30_000],
    [2, 0.999999, 60_000],
    [3, 0, 120_000],
    [9, 0.5, 120_000],
  ])('attempt %d with random %d waits %d ms', (attempt, r, ms) => {
    expect(retryDelayMs(attempt, () => r)).toBe(ms);
  });

  it('scales with a short base (tests) and stays within [step, 2·step]', () => {
    for (let i = 0; i < 50; i++) {
      const d = retryDelayMs(1, Math.random, 200);
      expect(d).toBeGreaterThanOrEqual(200);
      expect(d).toBeLessThanOrEqual(400);
    }
  });

  it('refuses attempt 0', () => expect(() => retryDelayMs(0, () => 0)).toThrow(RangeError));
});
