import { ConflictError, InternalServerError, MangoError, NotFoundError } from '@mango/sdk';
import { outcomeUnknown, RetryKey } from './retry-key';

const error = (Kind: typeof MangoError, status: number | undefined, details?: Record<string, unknown>) =>
  new Kind({ message: 'x', status, type: 'x', details });

describe('RetryKey: a console write retried by the user after an unknown outcome reuses its Idempotency-Key', () => {
  let n: number;
  let key: RetryKey;
  beforeEach(() => {
    n = 0;
    key = new RetryKey(() => `key-${++n}`);
  });

  it('the same request after a network error, a 5xx or an in-progress 409 gets the same key', () => {
    const request = { display_name: 'prod' };
    const first = key.next(request);
    for (const failure of [
      new TypeError('fetch failed'),
      error(MangoError, undefined),
      error(InternalServerError, 503),
      error(ConflictError, 409, { error_code: 'idempotency_in_progress' }),
    ]) {
      key.settle(failure);
      expect(key.next({ display_name: 'prod' })).toBe(first);
    }
  });

  it('a success, a refusal or a changed request takes a new key', () => {
    const a = key.next({ name: 'a' });
    key.settle();
    const b = key.next({ name: 'a' });
    expect(b).not.toBe(a);
    key.settle(error(NotFoundError, 404));
    const c = key.next({ name: 'a' });
    expect(c).not.toBe(b);
    key.settle(error(InternalServerError, 500));
    expect(key.next({ name: 'changed' })).not.toBe(c);
  });

  it.each([
    [error(ConflictError, 409, { error_code: 'idempotency_key_reused' }), false],
    [error(MangoError, 400), false],
    [error(MangoError, 408), true],
    [error(MangoError, 429), true],
    [error(MangoError, 502), true],
  ])('outcomeUnknown(%s) is %s', (e, unknown) => {
    expect(outcomeUnknown(e)).toBe(unknown);
  });
});
