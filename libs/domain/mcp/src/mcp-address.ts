import { AddressClass, classifyIp, judgeEgress, parseAllowEntries, parseIp } from '@mango/domain-kernel';
import type { AllowEntry } from '@mango/domain-kernel';

/**
 * Connectivity rule for MCP servers and their OAuth token endpoints (see docs/capabilities.md): the shared
 * egress address policy (libs/domain/kernel egress-address, docs/security-model-notes/outbound.md). A URL
 * whose host resolves to a loopback, private, link-local, unique-local, shared, unspecified, reserved or
 * cloud metadata address — including IPv6 forms that carry one — is refused unless the operator allowlists
 * it (`MANGO_MCP_ALLOWED_ADDRESSES`: comma-separated IPs or CIDR ranges, each with an optional port, e.g.
 * `127.0.0.1/32`, `10.0.0.5:8443`, `[::1]:3000`). Metadata endpoints are refused even then.
 */
export type { AddressClass };

export function classifyAddress(ip: string): AddressClass {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const parsed = parseIp(bare);
  return parsed ? classifyIp(parsed) : 'reserved';
}

export interface AddressAllowlist {
  /** Whether an entry covers the address on the port (an entry with a port needs the port). */
  allows(ip: string, port?: number): boolean;
  readonly entries: string[];
  /** The parsed entries (absent in a hand-made allowlist: then `allows` decides what it covers). */
  readonly rules?: readonly AllowEntry[];
}

/** Parses `MANGO_MCP_ALLOWED_ADDRESSES`; throws with the bad entry. */
export function parseAddressAllowlist(raw: string | undefined): AddressAllowlist {
  let rules: AllowEntry[];
  try {
    rules = parseAllowEntries(raw);
  } catch (e) {
    throw new Error(`MANGO_MCP_ALLOWED_ADDRESSES: ${(e as Error).message}`);
  }
  return {
    entries: rules.map((r) => r.text),
    rules,
    allows: (ip, port) => judgeEgress(ip, rules, port).allowed,
  };
}

/** Null when the address may be connected to (on the port); otherwise the reason it is refused. */
export function refusedAddress(ip: string, allowlist: AddressAllowlist, port?: number): string | null {
  const verdict = judgeEgress(ip, allowlist.rules ?? [], port);
  if (verdict.allowed) return null;
  const covered = !allowlist.rules && verdict.class !== 'metadata' && allowlist.allows(ip, port);
  if (covered) return null;
  const cls = verdict.class === 'invalid' ? 'reserved' : verdict.class;
  if (cls === 'metadata') return `${ip} is a metadata address; cloud metadata endpoints are never reachable`;
  // The port is named only when it matters (some entry allows addresses on one port only).
  const onPort =
    port !== undefined && allowlist.rules?.some((r) => r.port !== null) ? ` on port ${port}` : '';
  return `${ip} is a ${cls.replace('_', '-')} address${onPort}; MCP servers on private networks are refused unless the operator allowlists them (MANGO_MCP_ALLOWED_ADDRESSES)`;
}
