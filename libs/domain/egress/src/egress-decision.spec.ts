import { parseAllowEntries } from '@mango/domain-kernel';
import { decideEgress, EgressContext, judgeTarget } from './egress-decision';
import { SandboxNetworking } from './sandbox-networking';

const limited = (
  allowed_hosts: string[],
  flags: Partial<{ pm: boolean; mcp: boolean }> = {},
): SandboxNetworking => ({
  type: 'limited',
  allowed_hosts,
  allow_package_managers: flags.pm ?? false,
  allow_mcp_servers: flags.mcp ?? false,
});

const ctx = (networking: SandboxNetworking | null, more: Partial<EgressContext> = {}): EgressContext => ({
  networking,
  unrestrictedEnabled: false,
  mcpServers: [],
  allowedAddresses: [],
  controlPlane: { addresses: ['127.0.0.1', '::1'], port: 8080 },
  ...more,
});

const PUBLIC = ['93.184.216.34'];
const verdict = (d: ReturnType<typeof decideEgress>) => (d.allowed ? 'allowed' : d.rule);

describe('the Environment policy on the name and port (judged before any lookup)', () => {
  it.each<[string, SandboxNetworking | null, Partial<EgressContext>, string, number, string]>([
    ['no networking set: nothing', null, {}, 'github.com', 443, 'no_egress'],
    ['limited with no hosts: nothing', limited([]), {}, 'github.com', 443, 'host_not_allowed'],
    ['an exact name on 443', limited(['github.com']), {}, 'github.com', 443, 'allowed'],
    ['an exact name on 80', limited(['github.com']), {}, 'GitHub.com.', 80, 'allowed'],
    [
      'an entry without a port allows the web ports only',
      limited(['github.com']),
      {},
      'github.com',
      22,
      'host_not_allowed',
    ],
    ['an entry with a port allows that port', limited(['github.com:22']), {}, 'github.com', 22, 'allowed'],
    ['… and no other', limited(['github.com:22']), {}, 'github.com', 443, 'host_not_allowed'],
    [
      'an exact name is not its subdomains',
      limited(['github.com']),
      {},
      'api.github.com',
      443,
      'host_not_allowed',
    ],
    [
      'a wildcard covers names below it',
      limited(['*.github.com']),
      {},
      'codeload.api.github.com',
      443,
      'allowed',
    ],
    [
      'a wildcard does not cover its apex',
      limited(['*.github.com']),
      {},
      'github.com',
      443,
      'host_not_allowed',
    ],
    [
      'a wildcard is not a suffix match',
      limited(['*.github.com']),
      {},
      'evilgithub.com',
      443,
      'host_not_allowed',
    ],
    ['an IP entry covers that literal', limited(['93.184.216.34']), {}, '93.184.216.34', 443, 'allowed'],
    [
      'an IPv6 entry covers the bracketed literal',
      limited(['2606:2800:220:1::']),
      {},
      '[2606:2800:220:1:0::]',
      443,
      'allowed',
    ],
    [
      'a name entry does not cover an IP literal',
      limited(['github.com']),
      {},
      '140.82.112.3',
      443,
      'host_not_allowed',
    ],
    ['package registries on 443', limited([], { pm: true }), {}, 'pypi.org', 443, 'allowed'],
    ['package registries not on 80', limited([], { pm: true }), {}, 'pypi.org', 80, 'host_not_allowed'],
    ['package registries off', limited([]), {}, 'files.pythonhosted.org', 443, 'host_not_allowed'],
    [
      'the MCP servers when allowed',
      limited([], { mcp: true }),
      { mcpServers: [{ host: 'mcp.example.com', port: 443 }] },
      'mcp.example.com',
      443,
      'allowed',
    ],
    [
      'an MCP server on its own port only',
      limited([], { mcp: true }),
      { mcpServers: [{ host: 'mcp.example.com', port: 443 }] },
      'mcp.example.com',
      8443,
      'host_not_allowed',
    ],
    [
      'the MCP servers when not allowed',
      limited([]),
      { mcpServers: [{ host: 'mcp.example.com', port: 443 }] },
      'mcp.example.com',
      443,
      'host_not_allowed',
    ],
    [
      'unrestricted without the operator',
      { type: 'unrestricted' },
      {},
      'github.com',
      443,
      'unrestricted_not_enabled',
    ],
    [
      'unrestricted with the operator',
      { type: 'unrestricted' },
      { unrestrictedEnabled: true },
      'anything.example',
      8443,
      'allowed',
    ],
    ['a malformed host', limited(['github.com']), {}, 'github.com/x', 443, 'invalid_host'],
    [
      'a numeric name',
      { type: 'unrestricted' },
      { unrestrictedEnabled: true },
      '2130706433',
      443,
      'invalid_host',
    ],
    ['port 0', { type: 'unrestricted' }, { unrestrictedEnabled: true }, 'github.com', 0, 'invalid_host'],
  ])('%s', (_label, networking, more, host, port, expected) => {
    expect(verdict(judgeTarget(ctx(networking, more), { host, port }))).toBe(expected);
  });
});

describe('the resolved addresses (an allowed name is refused for where it points: pure decisions, never a connection)', () => {
  const allowAll = limited(['allowed.test', 'allowed.test:8080', 'allowed.test:9000', '*.allowed.test']);
  it.each<[string, string[], number, Partial<EgressContext>, string]>([
    ['a public address', PUBLIC, 443, {}, 'allowed'],
    ['no address', [], 443, {}, 'unresolved'],
    ['loopback', ['127.0.0.1'], 443, {}, 'loopback_address'],
    ['IPv6 loopback', ['::1'], 443, {}, 'loopback_address'],
    ['RFC 1918 10/8', ['10.0.0.5'], 443, {}, 'private_address'],
    ['RFC 1918 172.16/12', ['172.20.1.1'], 443, {}, 'private_address'],
    ['RFC 1918 192.168/16', ['192.168.1.1'], 443, {}, 'private_address'],
    ['CGNAT', ['100.64.0.1'], 443, {}, 'private_address'],
    ['unique local', ['fd12:3456::1'], 443, {}, 'private_address'],
    ['link-local', ['169.254.10.10'], 443, {}, 'link_local_address'],
    ['IPv6 link-local', ['fe80::1'], 443, {}, 'link_local_address'],
    ['cloud metadata', ['169.254.169.254'], 80, {}, 'metadata_address'],
    ['AWS metadata over IPv6', ['fd00:ec2::254'], 80, {}, 'metadata_address'],
    [
      'metadata even when the operator allows every address',
      ['169.254.169.254'],
      80,
      { allowedAddresses: parseAllowEntries('0.0.0.0/0') },
      'metadata_address',
    ],
    ['loopback as an IPv4-mapped IPv6 address', ['::ffff:127.0.0.1'], 443, {}, 'loopback_address'],
    ['a private address behind NAT64', ['64:ff9b::a00:1'], 443, {}, 'private_address'],
    ['unspecified', ['0.0.0.0'], 443, {}, 'unspecified_address'],
    ['one public and one private address', [...PUBLIC, '10.1.2.3'], 443, {}, 'private_address'],
    [
      'loopback the operator allowlisted',
      ['127.0.0.1'],
      9000,
      { allowedAddresses: parseAllowEntries('127.0.0.1') },
      'allowed',
    ],
    [
      '… on the allowlisted port only',
      ['127.0.0.1'],
      9000,
      { allowedAddresses: parseAllowEntries('127.0.0.1:9001') },
      'loopback_address',
    ],
    [
      'the control plane port on loopback, allowlisted or not',
      ['127.0.0.1'],
      8080,
      { allowedAddresses: parseAllowEntries('127.0.0.0/8') },
      'control_plane',
    ],
    [
      'the control plane port on another loopback address',
      ['127.0.0.2'],
      8080,
      { allowedAddresses: parseAllowEntries('127.0.0.0/8') },
      'control_plane',
    ],
    [
      'the control plane port on the unspecified address',
      ['0.0.0.0'],
      8080,
      { allowedAddresses: parseAllowEntries('0.0.0.0/0') },
      'control_plane',
    ],
    [
      'the control plane port as a mapped address',
      ['::ffff:127.0.0.1'],
      8080,
      { allowedAddresses: parseAllowEntries('::/0') },
      'control_plane',
    ],
    [
      'the control plane at a public address',
      ['93.184.216.34'],
      8080,
      { controlPlane: { addresses: ['93.184.216.34'], port: 8080 } },
      'control_plane',
    ],
    [
      'another port of the control plane host',
      ['93.184.216.34'],
      443,
      { controlPlane: { addresses: ['93.184.216.34'], port: 8080 } },
      'allowed',
    ],
  ])('%s', (_label, addresses, port, more, expected) => {
    expect(verdict(decideEgress(ctx(allowAll, more), { host: 'allowed.test', port }, addresses))).toBe(
      expected,
    );
  });

  it('a refused name is refused before its addresses matter, and the reason names the rule', () => {
    const d = decideEgress(ctx(limited(['github.com'])), { host: 'evil.example', port: 443 }, ['10.0.0.1']);
    expect(d).toEqual({
      allowed: false,
      rule: 'host_not_allowed',
      reason: expect.stringMatching(/evil\.example:443/),
    });
    const cp = decideEgress(
      ctx(allowAll, { allowedAddresses: parseAllowEntries('127.0.0.1') }),
      { host: 'allowed.test', port: 8080 },
      ['127.0.0.1'],
    );
    expect(cp).toEqual({
      allowed: false,
      rule: 'control_plane',
      reason: expect.stringMatching(/control plane/),
    });
  });
});
