import { workTraceparent } from './work-trace';

const encode = (o: unknown) => Buffer.from(JSON.stringify(o), 'utf8').toString('base64url');
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('workTraceparent', () => {
  it.each([
    [encode({ sessions_token: 't', api_base_url: 'http://x', traceparent: TP }), TP],
    [encode({ sessions_token: 't', api_base_url: 'http://x' }), undefined],
    [encode({ sessions_token: 't', traceparent: 'not-a-traceparent' }), undefined],
    [encode({ traceparent: 7 }), undefined],
    [encode(null), undefined],
    ['%%%', undefined],
    ['', undefined],
  ])('reads %s as %s', (secret, expected) => {
    expect(workTraceparent(secret)).toBe(expected);
  });
});
