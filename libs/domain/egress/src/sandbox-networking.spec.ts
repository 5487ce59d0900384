import { DomainError } from '@mango/domain-kernel';
import { parseHostRule, parseSandboxNetworking } from './sandbox-networking';

describe('allowed_hosts entries', () => {
  it.each([
    ['example.com', { kind: 'name', value: 'example.com', port: null }],
    ['Example.COM.', { kind: 'name', value: 'example.com', port: null }],
    ['api.example.com:8443', { kind: 'name', value: 'api.example.com', port: 8443 }],
    ['*.example.com', { kind: 'wildcard', value: 'example.com', port: null }],
    ['*.corp.example.com:443', { kind: 'wildcard', value: 'corp.example.com', port: 443 }],
    ['93.184.216.34', { kind: 'ip', value: '93.184.216.34', port: null }],
    ['93.184.216.34:8080', { kind: 'ip', value: '93.184.216.34', port: 8080 }],
    ['2606:2800:220:1::', { kind: 'ip', value: '2606:2800:220:1::', port: null }],
    ['[2606:2800:220:1::]:443', { kind: 'ip', value: '2606:2800:220:1::', port: 443 }],
    ['localhost', { kind: 'name', value: 'localhost', port: null }],
  ])('%s is accepted', (entry, rule) => expect(parseHostRule(entry)).toEqual(rule));

  it.each([
    ['a URL', 'https://example.com'],
    ['a path', 'example.com/repo'],
    ['userinfo', 'user@example.com'],
    ['a CIDR range', '10.0.0.0/8'],
    ['a wildcard over one label', '*.com'],
    ['a bare wildcard', '*'],
    ['a wildcard inside', 'api.*.example.com'],
    ['a wildcard suffix', 'example.*'],
    ['port 0', 'example.com:0'],
    ['port 65536', 'example.com:65536'],
    ['an empty port', 'example.com:'],
    ['a numeric name that resolvers read as an address', '2130706433'],
    ['a short IPv4 form', '127.1'],
    ['an IPv6 port without brackets', '2606:2800::1:443:x'],
    ['an IPv4 address in brackets', '[93.184.216.34]:443'],
    ['a zone id', 'fe80::1%eth0'],
    ['a label starting with a hyphen', '-bad.example.com'],
    ['an underscore', 'bad_name.example.com'],
    ['empty', ''],
    ['a 64-character label', `${'a'.repeat(64)}.com`],
  ])('%s is refused', (_label, entry) => expect(parseHostRule(entry)).toBeUndefined());
});

describe('config.networking (the hosted shape; every bad shape is a 400 naming the field)', () => {
  it('unrestricted and limited parse; limited defaults its flags and normalizes its hosts', () => {
    expect(parseSandboxNetworking({ type: 'unrestricted' })).toEqual({ type: 'unrestricted' });
    expect(
      parseSandboxNetworking({
        type: 'limited',
        allowed_hosts: ['GitHub.com', ' github.com ', '*.pypi.org'],
      }),
    ).toEqual({
      type: 'limited',
      allowed_hosts: ['github.com', '*.pypi.org'],
      allow_package_managers: false,
      allow_mcp_servers: false,
    });
    expect(
      parseSandboxNetworking({ type: 'limited', allow_package_managers: true, allow_mcp_servers: true }),
    ).toEqual({
      type: 'limited',
      allowed_hosts: [],
      allow_package_managers: true,
      allow_mcp_servers: true,
    });
  });

  it.each([
    ['not an object', 'limited', /config\.networking must be an object/],
    ['an unknown type', { type: 'open' }, /config\.networking\.type must be one of: unrestricted, limited/],
    ['no type', {}, /config\.networking\.type must be one of/],
    [
      'fields on unrestricted',
      { type: 'unrestricted', allowed_hosts: [] },
      /config\.networking\.allowed_hosts: unknown field/,
    ],
    [
      'an unknown field',
      { type: 'limited', allowed_ports: [] },
      /config\.networking\.allowed_ports: unknown field/,
    ],
    [
      'hosts not an array',
      { type: 'limited', allowed_hosts: 'github.com' },
      /allowed_hosts must be an array/,
    ],
    ['a host not a string', { type: 'limited', allowed_hosts: [42] }, /allowed_hosts\[0\] must be a string/],
    [
      'a URL host',
      { type: 'limited', allowed_hosts: ['github.com', 'https://x.com'] },
      /allowed_hosts\[1\] "https:\/\/x\.com" is not a host name/,
    ],
    [
      'too many hosts',
      { type: 'limited', allowed_hosts: Array.from({ length: 257 }, (_, i) => `h${i}.example.com`) },
      /at most 256 entries/,
    ],
    [
      'a flag not a boolean',
      { type: 'limited', allow_package_managers: 'yes' },
      /allow_package_managers must be a boolean/,
    ],
    ['a null flag', { type: 'limited', allow_mcp_servers: null }, /allow_mcp_servers must be a boolean/],
  ])('%s', (_label, input, message) => {
    let err: unknown;
    try {
      parseSandboxNetworking(input);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect((err as Error).message).toMatch(message);
  });
});
