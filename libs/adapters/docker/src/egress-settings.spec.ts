import { controlPlaneOf, parseEgressHostPins, pinnedResolver } from './egress-settings';

describe('the operator egress settings', () => {
  it('pins names to addresses (case-insensitive, several addresses), and refuses a malformed entry naming it', () => {
    const pins = parseEgressHostPins('git.internal.test=127.0.0.1, Both.test=127.0.0.1|::1');
    expect([...pins]).toEqual([
      ['git.internal.test', ['127.0.0.1']],
      ['both.test', ['127.0.0.1', '::1']],
    ]);
    expect(parseEgressHostPins(undefined).size).toBe(0);
    for (const bad of [
      'git.test',
      'git.test=',
      '=127.0.0.1',
      'git.test=not-an-ip',
      'bad_name=127.0.0.1',
      'a.test=fe80::1%eth0',
    ])
      expect(() => parseEgressHostPins(bad)).toThrow(new RegExp(`"${bad.replace(/[.|]/g, '\\$&')}"`));
  });

  it('a pinned name is answered without the fallback; others go to it', async () => {
    const asked: string[] = [];
    const resolve = pinnedResolver(parseEgressHostPins('pinned.test=127.0.0.1|::1'), async (h) => {
      asked.push(h);
      return [{ address: '93.184.216.34', family: 4 }];
    });
    expect(await resolve('PINNED.test')).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    expect(asked).toEqual([]);
    expect(await resolve('example.com')).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(asked).toEqual(['example.com']);
  });

  it('the control plane is MANGO_BASE_URL: its addresses and its port (the scheme default without one)', async () => {
    expect(await controlPlaneOf('http://127.0.0.1:8080')).toEqual({ addresses: ['127.0.0.1'], port: 8080 });
    expect(await controlPlaneOf('https://[::1]/')).toEqual({ addresses: ['::1'], port: 443 });
    const named = await controlPlaneOf('http://mango.test', async () => [
      { address: '127.0.0.1', family: 4 },
    ]);
    expect(named).toEqual({ addresses: ['127.0.0.1'], port: 80 });
    expect(await controlPlaneOf('http://gone.test:1', () => Promise.reject(new Error('ENOTFOUND')))).toEqual({
      addresses: [],
      port: 1,
    });
  });
});
