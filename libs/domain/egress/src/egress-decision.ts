import { AllowEntry, classifyIp, embeddedV4, judgeEgress, ParsedIp, parseIp } from '@mango/domain-kernel';
import { PACKAGE_REGISTRY_HOSTS } from './package-registry-hosts';
import {
  HostRule,
  normalizeHostName,
  parseHostRule,
  SandboxNetworking,
  WEB_PORTS,
} from './sandbox-networking';

/**
 * Whether a sandbox's proxy may open a connection (ADR 0021): pure, no DNS. The proxy asks twice — first
 * `judgeTarget` on the name and port the sandbox asked for (before any lookup: a refused name is never
 * resolved), then `judgeAddresses` on every address the proxy resolved it to, at the moment it connects.
 */

/** The rules that refuse a connection: what the metrics count and the Session's records name. */
export const EGRESS_RULES = [
  'no_egress',
  'unrestricted_not_enabled',
  'invalid_host',
  'host_not_allowed',
  'unresolved',
  'control_plane',
  'loopback_address',
  'private_address',
  'link_local_address',
  'metadata_address',
  'unspecified_address',
  'reserved_address',
  'invalid_address',
] as const;

export type EgressRule = (typeof EGRESS_RULES)[number];

/** How a connection the proxy allowed ended badly (unreachable, or cut by a bound). */
export const EGRESS_FAILURES = ['upstream_failed', 'idle', 'lifetime', 'too_large'] as const;

export type EgressFailure = (typeof EGRESS_FAILURES)[number];

export type EgressDecision = { allowed: true } | { allowed: false; rule: EgressRule; reason: string };

/** A host and port as the sandbox named them (`CONNECT host:port`, or an absolute-form URL's). */
export interface EgressTarget {
  /** A host name or an IP literal (IPv6 with or without brackets). */
  host: string;
  port: number;
}

/** What the supervisor knows besides the Environment's policy. */
export interface EgressContext {
  /** The Environment's `config.networking` at this activation; null: none set (no egress). */
  networking: SandboxNetworking | null;
  /** `MANGO_WORKER_EGRESS_UNRESTRICTED`: whether `unrestricted` is honoured at all. */
  unrestrictedEnabled: boolean;
  /** The hosts (with their ports) of the Session's Agent's MCP servers, for `allow_mcp_servers`. */
  mcpServers: readonly EgressTarget[];
  /** `MANGO_WORKER_EGRESS_ALLOWED_ADDRESSES`: non-public addresses the proxy may still reach. */
  allowedAddresses: readonly AllowEntry[];
  /** Where the control plane listens (MANGO_BASE_URL's addresses and port): never reached. */
  controlPlane: ControlPlane;
}

export interface ControlPlane {
  addresses: readonly string[];
  port: number;
}

const refused = (rule: EgressRule, reason: string): EgressDecision => ({ allowed: false, rule, reason });

/** The target's host as an IP literal (brackets removed), or undefined for a name. */
function literal(host: string): { text: string; ip: ParsedIp } | undefined {
  const text = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const ip = parseIp(text);
  return ip && !text.includes('%') ? { text, ip } : undefined;
}

const sameIp = (a: ParsedIp, b: ParsedIp) => a.family === b.family && a.value === b.value;

function ruleCovers(
  rule: HostRule,
  target: EgressTarget,
  name: string | undefined,
  ip: ParsedIp | undefined,
) {
  const portOk = rule.port === null ? WEB_PORTS.includes(target.port) : rule.port === target.port;
  if (!portOk) return false;
  if (rule.kind === 'ip') {
    const ruleIp = parseIp(rule.value);
    return ip !== undefined && ruleIp !== undefined && sameIp(ruleIp, ip);
  }
  if (name === undefined) return false;
  return rule.kind === 'name' ? name === rule.value : name.endsWith(`.${rule.value}`);
}

/**
 * The Environment's policy on the name (or IP literal) and port the sandbox asked for: no networking set
 * → `no_egress`; `unrestricted` → allowed only where the operator enabled it; `limited` → an
 * `allowed_hosts` entry, a package registry (port 443) or one of the Agent's MCP servers must cover it.
 */
export function judgeTarget(ctx: EgressContext, target: EgressTarget): EgressDecision {
  const lit = literal(target.host);
  const name = lit ? undefined : normalizeHostName(target.host);
  if (!lit && !name)
    return refused(
      'invalid_host',
      `${JSON.stringify(target.host.slice(0, 80))} is not a host name or IP address`,
    );
  if (!Number.isInteger(target.port) || target.port < 1 || target.port > 65535)
    return refused('invalid_host', `port ${target.port} is not a TCP port`);
  const shown = `${lit?.text ?? name}:${target.port}`;
  const n = ctx.networking;
  if (!n) return refused('no_egress', `this Environment allows no egress (config.networking is not set)`);
  if (n.type === 'unrestricted')
    return ctx.unrestrictedEnabled
      ? { allowed: true }
      : refused(
          'unrestricted_not_enabled',
          'this Environment asks for unrestricted egress, which this worker does not allow (MANGO_WORKER_EGRESS_UNRESTRICTED)',
        );
  const rules = n.allowed_hosts.map(parseHostRule).filter((r): r is HostRule => r !== undefined);
  if (rules.some((r) => ruleCovers(r, target, name, lit?.ip))) return { allowed: true };
  if (n.allow_package_managers && name && target.port === 443 && PACKAGE_REGISTRY_HOSTS.includes(name))
    return { allowed: true };
  if (n.allow_mcp_servers && name)
    for (const s of ctx.mcpServers)
      if (normalizeHostName(s.host) === name && s.port === target.port) return { allowed: true };
  if (n.allow_mcp_servers && lit)
    for (const s of ctx.mcpServers) {
      const l = literal(s.host);
      if (l && sameIp(l.ip, lit.ip) && s.port === target.port) return { allowed: true };
    }
  return refused('host_not_allowed', `${shown} is not in this Environment's allowed hosts`);
}

/** Loopback and unspecified (0.0.0.0 and :: reach the local host too), by the address or the IPv4 it carries. */
function isLocal(ip: ParsedIp): boolean {
  const cls = classifyIp(ip);
  return cls === 'loopback' || cls === 'unspecified';
}

/** Whether `ip` on `port` is where the control plane listens (any local address when it listens on one). */
export function isControlPlane(ip: ParsedIp, port: number, cp: ControlPlane): boolean {
  if (port !== cp.port) return false;
  const v4 = embeddedV4(ip);
  for (const text of cp.addresses) {
    const c = parseIp(text);
    if (!c) continue;
    if (sameIp(c, ip) || (v4 && sameIp(c, v4))) return true;
    if (isLocal(c) && isLocal(ip)) return true;
  }
  return false;
}

const CLASS_RULE = {
  loopback: 'loopback_address',
  private: 'private_address',
  link_local: 'link_local_address',
  metadata: 'metadata_address',
  unspecified: 'unspecified_address',
  reserved: 'reserved_address',
  invalid: 'invalid_address',
} as const;

/**
 * Every address the target resolved to (an IP literal: itself), on the target's port: the control plane
 * never; then the shared address policy (libs/domain/kernel egress-address: public unicast, or covered by
 * the operator's allowlist; metadata never). One refused address refuses the connection.
 */
export function judgeAddresses(
  ctx: Pick<EgressContext, 'allowedAddresses' | 'controlPlane'>,
  target: EgressTarget,
  addresses: readonly string[],
): EgressDecision {
  if (addresses.length === 0) return refused('unresolved', `${target.host} does not resolve to any address`);
  for (const address of addresses) {
    const ip = parseIp(address);
    if (!ip) return refused('invalid_address', `${target.host} resolved to ${address}, not an IP address`);
    if (isControlPlane(ip, target.port, ctx.controlPlane))
      return refused(
        'control_plane',
        `${target.host}:${target.port} resolves to ${address}, where Mango's control plane listens`,
      );
    const verdict = judgeEgress(address, ctx.allowedAddresses, target.port);
    if (!verdict.allowed)
      return refused(
        CLASS_RULE[verdict.class],
        `${target.host}:${target.port} resolves to ${address}, a ${verdict.class.replace('_', '-')} address`,
      );
  }
  return { allowed: true };
}

/** Both steps, for a target already resolved (tests, and callers that resolved already). */
export function decideEgress(
  ctx: EgressContext,
  target: EgressTarget,
  addresses: readonly string[],
): EgressDecision {
  const first = judgeTarget(ctx, target);
  return first.allowed ? judgeAddresses(ctx, target, addresses) : first;
}
