import { BlockList, isIP } from 'node:net';

/**
 * Connectivity rule for MCP servers (see docs/capabilities.md): a URL whose host resolves to a loopback, private,
 * link-local, unique-local, shared, unspecified or cloud metadata address is refused unless the operator
 * allowlists it (`MANGO_MCP_ALLOWED_ADDRESSES`: comma-separated IPs or CIDR ranges, e.g. `127.0.0.1/32`).
 */
export type AddressClass =
  'public' | 'loopback' | 'private' | 'link_local' | 'metadata' | 'unspecified' | 'reserved';

const ranges: Array<[AddressClass, string, number, 'ipv4' | 'ipv6']> = [
  ['metadata', '169.254.169.254', 32, 'ipv4'],
  ['metadata', '100.100.100.200', 32, 'ipv4'],
  ['metadata', 'fd00:ec2::254', 128, 'ipv6'],
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['private', '100.64.0.0', 10, 'ipv4'],
  ['link_local', '169.254.0.0', 16, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '224.0.0.0', 3, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link_local', 'fe80::', 10, 'ipv6'],
  ['reserved', 'ff00::', 8, 'ipv6'],
];

const lists = new Map<AddressClass, BlockList>();
for (const [cls, net, prefix, family] of ranges) {
  const list = lists.get(cls) ?? new BlockList();
  list.addSubnet(net, prefix, family);
  lists.set(cls, list);
}
const ORDER: AddressClass[] = ['metadata', 'unspecified', 'loopback', 'private', 'link_local', 'reserved'];

/** IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is classified as its IPv4 address. */
function normalise(ip: string): { ip: string; family: 'ipv4' | 'ipv6' } | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return { ip: mapped[1]!, family: 'ipv4' };
  const v = isIP(bare);
  if (v === 4) return { ip: bare, family: 'ipv4' };
  if (v === 6) return { ip: bare, family: 'ipv6' };
  return null;
}

export function classifyAddress(ip: string): AddressClass {
  const n = normalise(ip);
  if (!n) return 'reserved';
  for (const cls of ORDER) if (lists.get(cls)!.check(n.ip, n.family)) return cls;
  return 'public';
}

export interface AddressAllowlist {
  allows(ip: string): boolean;
  readonly entries: string[];
}

/** Parses `MANGO_MCP_ALLOWED_ADDRESSES`; throws with the bad entry. */
export function parseAddressAllowlist(raw: string | undefined): AddressAllowlist {
  const list = new BlockList();
  const entries = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [addr, prefixRaw] = entry.split('/');
    const n = normalise(addr ?? '');
    if (!n) throw new Error(`MANGO_MCP_ALLOWED_ADDRESSES: ${entry} is not an IP address or CIDR range`);
    const max = n.family === 'ipv4' ? 32 : 128;
    const prefix = prefixRaw === undefined ? max : Number(prefixRaw);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > max)
      throw new Error(`MANGO_MCP_ALLOWED_ADDRESSES: ${entry} has an invalid prefix length`);
    list.addSubnet(n.ip, prefix, n.family);
  }
  return {
    entries,
    allows: (ip) => {
      const n = normalise(ip);
      return n !== null && list.check(n.ip, n.family);
    },
  };
}

/** Null when the address may be connected to; otherwise the reason it is refused. */
export function refusedAddress(ip: string, allowlist: AddressAllowlist): string | null {
  const cls = classifyAddress(ip);
  if (cls === 'public' || allowlist.allows(ip)) return null;
  return `${ip} is a ${cls.replace('_', '-')} address; MCP servers on private networks are refused unless the operator allowlists them (MANGO_MCP_ALLOWED_ADDRESSES)`;
}
