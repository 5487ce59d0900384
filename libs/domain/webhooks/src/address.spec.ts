import { classifyAddress, judgeAddress, parseCidrList, parseIp } from './address';

describe('webhook address rules', () => {
  it.each<[string, string]>([
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.10.10', 'link_local'],
    ['169.254.169.254', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link_local'],
    ['fd12:3456::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['2606:4700:4700::1111', 'public'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['[::1]', 'loopback'],
    ['fe80::1%eth0', 'link_local'],
    ['2001:db8::1', 'reserved'],
  ])('%s is %s', (ip, cls) => {
    const parsed = parseIp(ip);
    expect(parsed).toBeDefined();
    expect(classifyAddress(parsed!)).toBe(cls);
  });

  it.each([
    '64:ff9b:1::a00:1',
    '::ffff:0:127.0.0.1',
    '2002:7f00:1::',
    '2002:a9fe:a9fe::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '168.63.129.16',
  ])('%s (an embedded or cloud-internal form) is refused', (ip) => {
    expect(judgeAddress(ip, []).allowed).toBe(false);
  });

  it.each(['localhost', '1.2.3', '256.1.1.1', '01.2.3.4', '1::2::3', ':::', '1:2:3:4:5:6:7:8:9', 'g::1', ''])(
    '%s is not an IP literal',
    (s) => expect(parseIp(s)).toBeUndefined(),
  );

  it('parses full and compressed IPv6 to the same value', () => {
    expect(parseIp('0:0:0:0:0:0:0:1')).toEqual(parseIp('::1'));
    expect(parseIp('2001:0db8:0000:0000:0000:0000:0000:0001')).toEqual(parseIp('2001:db8::1'));
  });

  it.each<[string, string, boolean]>([
    ['8.8.8.8', '', true],
    ['127.0.0.1', '', false],
    ['127.0.0.1', '127.0.0.0/8', true],
    ['127.0.0.1', '127.0.0.1', true],
    ['::ffff:127.0.0.1', '127.0.0.0/8', true],
    ['127.0.0.2', '127.0.0.1/32', false],
    ['::1', '127.0.0.0/8', false],
    ['::1', '127.0.0.0/8,::1/128', true],
    ['10.0.0.7', '10.0.0.0/24', true],
    ['10.0.1.7', '10.0.0.0/24', false],
    ['169.254.169.254', '169.254.0.0/16', false],
    ['169.254.169.254', '0.0.0.0/0', false],
    ['fd00:ec2::254', '::/0', false],
  ])('%s with allowlist "%s" allowed=%s', (ip, list, allowed) => {
    expect(judgeAddress(ip, parseCidrList(list)).allowed).toBe(allowed);
  });

  it('names the address class in a refusal', () => {
    expect(judgeAddress('192.168.0.5', [])).toEqual({
      allowed: false,
      reason: expect.stringContaining('private'),
    });
  });

  it.each(['10.0.0.0/33', 'nope', '10.0.0.0/', '::1/129', '1.2.3.4/8/9'])(
    'refuses the allowlist entry %s',
    (bad) => expect(() => parseCidrList(`127.0.0.1/32,${bad}`)).toThrow(bad),
  );
});
