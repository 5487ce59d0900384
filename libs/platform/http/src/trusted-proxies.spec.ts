import { parseTrustedProxies } from './trusted-proxies';

describe('MANGO_TRUSTED_PROXIES', () => {
  it.each<[string | undefined, string[]]>([
    [undefined, []],
    ['', []],
    ['loopback', ['loopback']],
    ['10.0.0.0/8, 192.168.1.7 ,uniquelocal', ['10.0.0.0/8', '192.168.1.7', 'uniquelocal']],
    ['fd00::/8,::1', ['fd00::/8', '::1']],
  ])('%p is accepted', (value, proxies) => {
    expect(parseTrustedProxies(value)).toEqual({ proxies });
  });

  it.each(['*', 'true', '10.0.0.0/33', 'fd00::/129', '10.0.0.1/8/1', 'proxy.internal', '10.0.0.0/x'])(
    '%p is refused, naming the variable and the entry',
    (value) => {
      const parsed = parseTrustedProxies(`loopback,${value}`);
      expect(parsed).toEqual({
        problem: expect.stringContaining(`MANGO_TRUSTED_PROXIES: ${JSON.stringify(value)}`),
      });
    },
  );
});
