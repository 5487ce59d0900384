/**
 * Where a webhook may be delivered: a pure classifier for IPv4/IPv6 literals and CIDR allowlists
 * (no DNS here — the sender resolves the host and asks this module about every address it gets).
 */
export type AddressClass = 'public' | 'loopback' | 'private' | 'link_local' | 'metadata' | 'reserved';

export interface ParsedIp {
  family: 4 | 6;
  /** The address as an unsigned integer (32 or 128 bits). */
  value: bigint;
}

const V4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function parseV4(s: string): bigint | undefined {
  const m = V4.exec(s);
  if (!m) return undefined;
  let v = 0n;
  for (let i = 1; i <= 4; i++) {
    const part = m[i]!;
    if (part.length > 1 && part.startsWith('0')) return undefined; // no octal-looking octets
    const n = Number(part);
    if (n > 255) return undefined;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseV6(input: string): bigint | undefined {
  let s = input;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(':')) return undefined;
  // A trailing dotted quad stands for the last two groups.
  const lastColon = s.lastIndexOf(':');
  const quad = s.slice(lastColon + 1);
  if (quad.includes('.')) {
    const v4 = parseV4(quad);
    if (v4 === undefined) return undefined;
    s = `${s.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const read = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = read(halves[0]!);
  const rest = halves.length === 2 ? read(halves[1]!) : [];
  if (!head || !rest) return undefined;
  let groups: number[];
  if (halves.length === 2) {
    if (head.length + rest.length > 7) return undefined;
    groups = [...head, ...Array<number>(8 - head.length - rest.length).fill(0), ...rest];
  } else {
    if (head.length !== 8) return undefined;
    groups = head;
  }
  let v = 0n;
  for (const g of groups) v = (v << 16n) | BigInt(g);
  return v;
}

/** An IPv4 or IPv6 literal (brackets and zone ids allowed), or undefined when `s` is not one. */
export function parseIp(s: string): ParsedIp | undefined {
  const v4 = parseV4(s);
  if (v4 !== undefined) return { family: 4, value: v4 };
  const v6 = parseV6(s);
  if (v6 !== undefined) return { family: 6, value: v6 };
  return undefined;
}

interface Range {
  family: 4 | 6;
  base: bigint;
  bits: number;
}

export interface Cidr extends Range {
  text: string;
}

const within = (ip: ParsedIp, r: Range): boolean => {
  if (ip.family !== r.family) return false;
  const width = ip.family === 4 ? 32 : 128;
  const shift = BigInt(width - r.bits);
  return ip.value >> shift === r.base >> shift;
};

const range = (text: string): Range => {
  const [addr, bits] = text.split('/');
  const ip = parseIp(addr!)!;
  return { family: ip.family, base: ip.value, bits: Number(bits) };
};

/** IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) addresses are judged by their IPv4 part. */
function unwrapV4(ip: ParsedIp): ParsedIp {
  if (ip.family === 6 && (within(ip, range('::ffff:0:0/96')) || within(ip, range('64:ff9b::/96'))))
    return { family: 4, value: ip.value & 0xffffffffn };
  return ip;
}

const CLASSES: Array<[AddressClass, Range]> = (
  [
    // Cloud metadata endpoints first: they sit inside link-local / ULA space.
    ['metadata', '169.254.169.254/32'],
    ['metadata', '169.254.170.2/32'],
    ['metadata', '100.100.100.200/32'],
    ['metadata', 'fd00:ec2::254/128'],
    ['reserved', '0.0.0.0/8'],
    ['private', '10.0.0.0/8'],
    ['private', '100.64.0.0/10'],
    ['loopback', '127.0.0.0/8'],
    ['link_local', '169.254.0.0/16'],
    ['private', '172.16.0.0/12'],
    ['reserved', '192.0.0.0/24'],
    ['reserved', '192.0.2.0/24'],
    ['private', '192.168.0.0/16'],
    ['reserved', '198.18.0.0/15'],
    ['reserved', '198.51.100.0/24'],
    ['reserved', '203.0.113.0/24'],
    ['reserved', '224.0.0.0/4'],
    ['reserved', '240.0.0.0/4'],
    ['reserved', '::/128'],
    ['loopback', '::1/128'],
    ['reserved', '100::/64'],
    ['reserved', '2001:db8::/32'],
    ['private', 'fc00::/7'],
    ['link_local', 'fe80::/10'],
    ['reserved', 'ff00::/8'],
  ] as Array<[AddressClass, string]>
).map(([c, t]) => [c, range(t)]);

export function classifyAddress(ip: ParsedIp): AddressClass {
  const v = unwrapV4(ip);
  for (const [c, r] of CLASSES) if (within(v, r)) return c;
  return 'public';
}

/**
 * The operator allowlist (`MANGO_WEBHOOK_ALLOWED_CIDRS`): comma-separated CIDRs (or bare addresses) of
 * non-public addresses that webhooks may still reach — for tests and private deployments. Throws with a
 * message naming the bad entry.
 */
export function parseCidrList(raw: string | undefined): Cidr[] {
  if (!raw || raw.trim() === '') return [];
  return raw.split(',').map((entry) => {
    const text = entry.trim();
    const [addr, bitsText, extra] = text.split('/');
    const ip = parseIp(addr ?? '');
    const width = ip?.family === 4 ? 32 : 128;
    const bits = bitsText === undefined ? width : Number(bitsText);
    if (!ip || extra !== undefined || !Number.isInteger(bits) || bits < 0 || bits > width || bitsText === '')
      throw new Error(`"${text}" is not an IPv4/IPv6 address or CIDR`);
    return { family: ip.family, base: ip.value, bits, text };
  });
}

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/**
 * May a delivery connect to this address? Public addresses yes; others only when the allowlist covers
 * them — except cloud metadata endpoints, which are never reachable.
 */
export function judgeAddress(address: string, allow: readonly Cidr[]): AddressVerdict {
  const ip = parseIp(address);
  if (!ip) return { allowed: false, reason: `${address} is not an IP address` };
  const cls = classifyAddress(ip);
  if (cls === 'public') return { allowed: true };
  if (cls === 'metadata') return { allowed: false, reason: `${address} is a cloud metadata address` };
  const v = unwrapV4(ip);
  if (allow.some((c) => within(v, c) || within(ip, c))) return { allowed: true };
  return {
    allowed: false,
    reason: `${address} is a ${cls.replace('_', '-')} address (not in MANGO_WEBHOOK_ALLOWED_CIDRS)`,
  };
}
