/**
 * The one address policy for every outbound call to an address a user chose (webhook endpoints, MCP
 * servers, OAuth token endpoints): pure, no DNS — the caller resolves a host and asks about every address
 * it gets, at the moment the socket is opened (docs/security-model-notes/outbound.md).
 *
 * Public unicast addresses may be reached. Everything else — loopback, private, shared (CGNAT), link-local,
 * unique-local, site-local, multicast, unspecified, documentation, benchmarking, reserved, and anything
 * outside IPv6 global unicast (2000::/3) — is refused unless the operator's allowlist covers it. Cloud
 * metadata endpoints (AWS/GCP/Azure/Alibaba, including Azure's wireserver 168.63.129.16, which sits in
 * public space) are refused even then. IPv6 forms that carry an IPv4 address are judged by that IPv4
 * address: mapped (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4
 * (2002::/16). Forms that cannot be judged that way are refused outright: the local-use NAT64 prefix
 * (64:ff9b:1::/48), Teredo (2001::/32, inside the refused 2001::/23) and IPv4-compatible (::/96).
 */
export type AddressClass =
  'public' | 'loopback' | 'private' | 'link_local' | 'metadata' | 'unspecified' | 'reserved';

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

const within = (ip: ParsedIp, r: Range): boolean => {
  if (ip.family !== r.family) return false;
  const width = ip.family === 4 ? 32 : 128;
  const shift = BigInt(width - r.bits);
  return ip.value >> shift === r.base >> shift;
};

const range = (text: string): Range => {
  const [addr, bits] = text.split('/');
  const ip = parseIp(addr!)!;
  return { family: ip.family, base: ip.value, bits: Number(bits ?? (ip.family === 4 ? 32 : 128)) };
};

const MAPPED = range('::ffff:0:0/96');
const TRANSLATED = range('::ffff:0:0:0/96');
const NAT64 = range('64:ff9b::/96');
const SIX_TO_FOUR = range('2002::/16');

/**
 * The IPv4 address an IPv6 address carries where the carrying form is judged by it: mapped, translated,
 * well-known-prefix NAT64 (the last 32 bits) and 6to4 (bits 16–47); undefined for every other address.
 */
export function embeddedV4(ip: ParsedIp): ParsedIp | undefined {
  if (ip.family !== 6) return undefined;
  if (within(ip, MAPPED) || within(ip, TRANSLATED) || within(ip, NAT64))
    return { family: 4, value: ip.value & 0xffffffffn };
  if (within(ip, SIX_TO_FOUR)) return { family: 4, value: (ip.value >> 80n) & 0xffffffffn };
  return undefined;
}

// First match wins: metadata endpoints first (they sit inside link-local, ULA and even public space).
const CLASSES: Array<[AddressClass, Range]> = (
  [
    ['metadata', '169.254.169.254'], // AWS, GCP, Azure IMDS, OpenStack …
    ['metadata', '169.254.170.2'], // AWS ECS task credentials
    ['metadata', '169.254.170.23'], // AWS EKS Pod Identity
    ['metadata', '100.100.100.200'], // Alibaba Cloud
    ['metadata', '168.63.129.16'], // Azure wireserver (public space)
    ['metadata', 'fd00:ec2::254'], // AWS IMDS over IPv6
    ['metadata', 'fd00:ec2::23'], // AWS EKS Pod Identity over IPv6
    ['unspecified', '0.0.0.0/8'],
    ['private', '10.0.0.0/8'],
    ['private', '100.64.0.0/10'], // shared address space (CGNAT)
    ['loopback', '127.0.0.0/8'],
    ['link_local', '169.254.0.0/16'],
    ['private', '172.16.0.0/12'],
    ['reserved', '192.0.0.0/24'], // IETF protocol assignments
    ['reserved', '192.0.2.0/24'], // documentation
    ['reserved', '192.88.99.0/24'], // 6to4 relay anycast (deprecated)
    ['private', '192.168.0.0/16'],
    ['reserved', '198.18.0.0/15'], // benchmarking
    ['reserved', '198.51.100.0/24'], // documentation
    ['reserved', '203.0.113.0/24'], // documentation
    ['reserved', '224.0.0.0/4'], // multicast
    ['reserved', '240.0.0.0/4'], // reserved, and the broadcast address
    ['unspecified', '::/128'],
    ['loopback', '::1/128'],
    ['reserved', '::/96'], // IPv4-compatible (deprecated)
    ['private', '64:ff9b:1::/48'], // local-use NAT64
    ['reserved', '100::/64'], // discard
    ['reserved', '2001::/23'], // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID …
    ['reserved', '2001:db8::/32'], // documentation
    ['reserved', '3fff::/20'], // documentation
    ['private', 'fc00::/7'], // unique local
    ['link_local', 'fe80::/10'],
    ['private', 'fec0::/10'], // site-local (deprecated)
    ['reserved', 'ff00::/8'], // multicast
  ] as Array<[AddressClass, string]>
).map(([c, t]) => [c, range(t)]);

const GLOBAL_UNICAST_V6 = range('2000::/3');

export function classifyIp(ip: ParsedIp): AddressClass {
  for (const [c, r] of CLASSES) if (within(ip, r)) return c;
  const v4 = embeddedV4(ip);
  if (v4) return classifyIp(v4);
  if (ip.family === 6 && !within(ip, GLOBAL_UNICAST_V6)) return 'reserved';
  return 'public';
}

/** One allowlist entry: an address or CIDR range, and the one port it allows (null: any port). */
export interface AllowEntry extends Range {
  port: number | null;
  text: string;
}

/**
 * An operator allowlist: comma-separated entries, each an IPv4/IPv6 address or CIDR range with an
 * optional port — `10.0.0.0/8`, `127.0.0.1:8080`, `::1`, `[::1]:8080`, `[fd00::/8]:443`. An entry
 * without a port allows every port of its addresses; with one, only that port (a URL without a port
 * uses its scheme's: 80 for http, 443 for https). Throws with a message naming the bad entry.
 */
export function parseAllowEntries(raw: string | undefined): AllowEntry[] {
  if (!raw || raw.trim() === '') return [];
  return raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)
    .map((text) => {
      const bad = () =>
        new Error(`"${text}" is not an IPv4/IPv6 address or CIDR range (with an optional :port)`);
      let addrPart: string;
      let portText: string | undefined;
      const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
      const v4 = /^([\d.]+(?:\/\d*)?)(?::(\d+))?$/.exec(text);
      if (bracketed) [addrPart, portText] = [bracketed[1]!, bracketed[2]];
      else if (v4) [addrPart, portText] = [v4[1]!, v4[2]];
      else addrPart = text; // a bare IPv6 address or range: no port
      const [addr, bitsText, extra] = addrPart.split('/');
      const ip = parseIp(addr ?? '');
      const width = ip?.family === 4 ? 32 : 128;
      const bits = bitsText === undefined ? width : Number(bitsText);
      if (
        !ip ||
        extra !== undefined ||
        bitsText === '' ||
        !Number.isInteger(bits) ||
        bits < 0 ||
        bits > width
      )
        throw bad();
      if (bracketed && ip.family !== 6) throw bad();
      const port = portText === undefined ? null : Number(portText);
      if (port !== null && !(Number.isInteger(port) && port >= 1 && port <= 65535)) throw bad();
      return { family: ip.family, base: ip.value, bits, port, text };
    });
}

/** The port a URL connects to (its explicit port, else its scheme's default). */
export function urlPort(url: { port: string; protocol: string }): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

export type EgressVerdict =
  { allowed: true } | { allowed: false; class: Exclude<AddressClass, 'public'> | 'invalid' };

/**
 * May an outbound connection go to `address` (on `port`)? Public: yes. Metadata: never. Otherwise only when
 * an allowlist entry covers the address (or the IPv4 address it carries) and its port (an entry with a
 * port never matches when the port is not known).
 */
export function judgeEgress(address: string, allow: readonly AllowEntry[], port?: number): EgressVerdict {
  const ip = parseIp(address);
  if (!ip) return { allowed: false, class: 'invalid' };
  const cls = classifyIp(ip);
  if (cls === 'public') return { allowed: true };
  if (cls === 'metadata') return { allowed: false, class: cls };
  const v4 = embeddedV4(ip);
  const covered = allow.some(
    (e) => (within(ip, e) || (v4 !== undefined && within(v4, e))) && (e.port === null || e.port === port),
  );
  return covered ? { allowed: true } : { allowed: false, class: cls };
}
