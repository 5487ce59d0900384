import {
  AddressClass,
  AllowEntry,
  classifyIp,
  judgeEgress,
  parseAllowEntries,
  ParsedIp,
  parseIp,
} from '@mango/domain-kernel';

/**
 * Where a webhook may be delivered: the shared egress address policy (libs/domain/kernel egress-address,
 * docs/security-model-notes/outbound.md) with the webhook allowlist `MANGO_WEBHOOK_ALLOWED_CIDRS`. No DNS
 * here — the sender resolves the host and asks about every address it gets.
 */
export type { AddressClass, ParsedIp };
export { parseIp };

/** One `MANGO_WEBHOOK_ALLOWED_CIDRS` entry (an address or range, optionally with a port). */
export type Cidr = AllowEntry;

export function classifyAddress(ip: ParsedIp): AddressClass {
  return classifyIp(ip);
}

/**
 * The operator allowlist (`MANGO_WEBHOOK_ALLOWED_CIDRS`): comma-separated addresses or CIDR ranges, each
 * with an optional port (`127.0.0.1:8080`, `[::1]:8080`), of non-public addresses that webhooks may still
 * reach — for tests and private deployments. Throws with a message naming the bad entry.
 */
export function parseCidrList(raw: string | undefined): Cidr[] {
  return parseAllowEntries(raw);
}

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

/**
 * May a delivery connect to this address (on this port)? Public addresses yes; others only when the
 * allowlist covers them — except cloud metadata endpoints, which are never reachable.
 */
export function judgeAddress(address: string, allow: readonly Cidr[], port?: number): AddressVerdict {
  const verdict = judgeEgress(address, allow, port);
  if (verdict.allowed) return verdict;
  if (verdict.class === 'invalid') return { allowed: false, reason: `${address} is not an IP address` };
  if (verdict.class === 'metadata')
    return { allowed: false, reason: `${address} is a cloud metadata address` };
  // The port is named only when it matters (some entry allows addresses on one port only).
  const onPort = port !== undefined && allow.some((e) => e.port !== null) ? ` on port ${port}` : '';
  return {
    allowed: false,
    reason: `${address} is a ${verdict.class.replace('_', '-')} address${onPort} (not in MANGO_WEBHOOK_ALLOWED_CIDRS)`,
  };
}
