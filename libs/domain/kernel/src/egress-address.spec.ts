import { classifyIp, judgeEgress, parseAllowEntries, parseIp, urlPort } from './egress-address';

const classOf = (ip: string) => {
  const parsed = parseIp(ip);
  if (!parsed) throw new Error(`${ip} did not parse`);
  return classifyIp(parsed);
};

describe('the egress address policy (pure: no connection to any of these addresses is ever made)', () => {
  it.each<[string, string]>([
    // Public unicast.
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001:81d::200e', 'public'],
    // IPv4 special ranges.
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['169.254.10.10', 'link_local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.8', 'reserved'],
    ['192.0.0.192', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'reserved'],
    ['198.19.255.255', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['239.255.255.250', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    // Cloud metadata, including Azure's wireserver in public space.
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['169.254.170.23', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['168.63.129.16', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['fd00:ec2::23', 'metadata'],
    // IPv6 special ranges.
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fec0::1', 'private'],
    ['ff02::1', 'reserved'],
    ['100::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['2001:2::1', 'reserved'],
    ['2001:20::1', 'reserved'],
    ['4000::1', 'reserved'], // outside 2000::/3: not global unicast
    ['::7f00:1', 'reserved'], // IPv4-compatible (deprecated)
    ['::8.8.8.8', 'reserved'],
    // Teredo: refused outright, whatever it embeds.
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['2001::1', 'reserved'],
    // IPv4-mapped: judged as the IPv4 address.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:168.63.129.16', 'metadata'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    // IPv4-translated (::ffff:0:a.b.c.d): judged as the IPv4 address.
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::ffff:0:a9fe:a9fe', 'metadata'],
    ['::ffff:0:8.8.8.8', 'public'],
    // NAT64 well-known prefix: judged as the IPv4 address.
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::169.254.169.254', 'metadata'],
    ['64:ff9b::8.8.8.8', 'public'],
    // NAT64 local-use prefix: refused outright (its IPv4 position depends on the operator's prefix length).
    ['64:ff9b:1::a00:1', 'private'],
    ['64:ff9b:1:808:8:800::', 'private'],
    // 6to4: judged as the IPv4 address in bits 16–47.
    ['2002:7f00:1::', 'loopback'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['2002:a00:1::1', 'private'],
    ['2002:c0a8:101::', 'private'],
    ['2002:808:808::1', 'public'],
  ])('%s is %s', (ip, cls) => expect(classOf(ip)).toBe(cls));

  it.each(['localhost', '1.2.3', '256.1.1.1', '01.2.3.4', '1::2::3', ':::', '1:2:3:4:5:6:7:8:9', 'g::1', ''])(
    '%s is not an IP literal (and is refused)',
    (s) => {
      expect(parseIp(s)).toBeUndefined();
      expect(judgeEgress(s, parseAllowEntries('0.0.0.0/0,::/0'))).toEqual({
        allowed: false,
        class: 'invalid',
      });
    },
  );

  it.each<[string, string, number | undefined, boolean]>([
    ['8.8.8.8', '', 443, true],
    ['127.0.0.1', '', 80, false],
    ['127.0.0.1', '127.0.0.0/8', 8080, true],
    ['127.0.0.1', '127.0.0.1', 1, true],
    ['::ffff:127.0.0.1', '127.0.0.0/8', 80, true],
    ['64:ff9b::7f00:1', '127.0.0.1', 80, true],
    ['127.0.0.2', '127.0.0.1/32', 80, false],
    ['::1', '127.0.0.0/8', 80, false],
    ['::1', '127.0.0.0/8,::1/128', 80, true],
    ['10.0.0.7', '10.0.0.0/24', 80, true],
    ['10.0.1.7', '10.0.0.0/24', 80, false],
    // Metadata endpoints are refused whatever the allowlist says.
    ['169.254.169.254', '169.254.0.0/16', 80, false],
    ['169.254.169.254', '0.0.0.0/0', 80, false],
    ['168.63.129.16', '0.0.0.0/0', 80, false],
    ['fd00:ec2::254', '::/0', 80, false],
    ['::ffff:169.254.169.254', '0.0.0.0/0,::/0', 80, false],
    // Ports: an entry with a port allows that port only; without one, every port.
    ['10.0.0.5', '10.0.0.5:443', 443, true],
    ['10.0.0.5', '10.0.0.5:443', 8443, false],
    ['10.0.0.5', '10.0.0.5:443', undefined, false],
    ['10.0.0.5', '10.0.0.0/8:8080', 8080, true],
    ['10.0.0.5', '10.0.0.0/8:8080,10.0.0.5:9090', 9090, true],
    ['10.0.0.5', '10.0.0.0/8:8080,10.0.0.5:9090', 80, false],
    ['::1', '[::1]:8080', 8080, true],
    ['::1', '[::1]:8080', 8081, false],
    ['fd00::7', '[fd00::/8]:443', 443, true],
    ['fd00::7', '[fd00::/8]', 1234, true],
  ])('%s with allowlist "%s" on port %s: allowed=%s', (ip, list, port, allowed) => {
    expect(judgeEgress(ip, parseAllowEntries(list), port).allowed).toBe(allowed);
  });

  it('names the class in a refusal', () => {
    expect(judgeEgress('192.168.0.5', [])).toEqual({ allowed: false, class: 'private' });
    expect(judgeEgress('2002:7f00:1::', [])).toEqual({ allowed: false, class: 'loopback' });
  });

  it.each([
    '10.0.0.0/33',
    'nope',
    '10.0.0.0/',
    '::1/129',
    '1.2.3.4/8/9',
    '10.0.0.1:0',
    '10.0.0.1:65536',
    '10.0.0.1:http',
    '[10.0.0.1]:80',
    '[::1]:',
    '::1:80:x',
  ])('refuses the allowlist entry %s', (bad) =>
    expect(() => parseAllowEntries(`127.0.0.1/32,${bad}`)).toThrow(bad),
  );

  it('reads entries with and without ports', () => {
    expect(
      parseAllowEntries(' 127.0.0.1:8080 , ::1, [fd00::/8]:443,10.0.0.0/8 ').map((e) => [e.text, e.port]),
    ).toEqual([
      ['127.0.0.1:8080', 8080],
      ['::1', null],
      ['[fd00::/8]:443', 443],
      ['10.0.0.0/8', null],
    ]);
  });

  it.each<[string, number]>([
    ['http://h.test/', 80],
    ['https://h.test/', 443],
    ['http://h.test:8080/', 8080],
    ['https://[::1]:8443/', 8443],
  ])('%s connects to port %d', (url, port) => expect(urlPort(new URL(url))).toBe(port));
});
