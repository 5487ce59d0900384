import { invalidRequest, parseIp, readArray, readBoolean, readEnum, readObject } from '@mango/domain-kernel';

/**
 * An Environment's sandbox network policy, `config.networking` (docs/api-guide.md "Sandbox egress",
 * ADR 0021), in the hosted API's shape. Absent: no egress at all (the sealed default).
 */
export type SandboxNetworking =
  | { type: 'unrestricted' }
  | {
      type: 'limited';
      allowed_hosts: string[];
      allow_package_managers: boolean;
      allow_mcp_servers: boolean;
    };

/** The most `allowed_hosts` entries one Environment may list. */
export const MAX_ALLOWED_HOSTS = 256;

/** One parsed `allowed_hosts` entry. `port` null: the web ports (80 and 443) only. */
export interface HostRule {
  kind: 'name' | 'wildcard' | 'ip';
  /** Lower-case name (a wildcard's suffix without `*.`), or the IP address as written (no brackets). */
  value: string;
  port: number | null;
}

/** Ports an entry without a port allows: plain HTTP and HTTPS. */
export const WEB_PORTS: readonly number[] = [80, 443];

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A DNS host name: dot-separated labels of letters, digits and hyphens, at most 253 characters, and a
 * last label that is not all digits (so `2130706433` or `127.1` are never taken for names: resolvers read
 * them as IPv4 addresses). Lower-case, one trailing dot removed; undefined when `raw` is not one.
 */
export function normalizeHostName(raw: string): string | undefined {
  let s = raw.toLowerCase();
  if (s.endsWith('.')) s = s.slice(0, -1);
  if (s.length === 0 || s.length > 253) return undefined;
  const labels = s.split('.');
  if (!labels.every((l) => LABEL.test(l))) return undefined;
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return undefined;
  return s;
}

const parsePort = (text: string): number | undefined => {
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= 65535 ? n : undefined;
};

/**
 * One `allowed_hosts` entry: `example.com`, `*.example.com` (any name below it, not the name itself),
 * `93.184.216.34`, `2606:2800::1`, each with an optional `:port` (IPv6 with a port in brackets:
 * `[2606:2800::1]:8443`). Undefined when the entry is none of these (a URL, a path, a CIDR range, a
 * wildcard anywhere but the first label, or over a single label such as `*.com`).
 */
export function parseHostRule(entry: string): HostRule | undefined {
  const text = entry.trim();
  if (text.length === 0 || text.length > 260) return undefined;
  const bracketed = /^\[([^\]]+)\](?::([^:]*))?$/.exec(text);
  if (bracketed) {
    const ip = parseIp(bracketed[1]!);
    if (!ip || ip.family !== 6 || bracketed[1]!.includes('%')) return undefined;
    const port = bracketed[2] === undefined ? null : parsePort(bracketed[2]);
    if (port === undefined) return undefined;
    return { kind: 'ip', value: bracketed[1]!.toLowerCase(), port };
  }
  if ((text.match(/:/g) ?? []).length > 1) {
    // A bare IPv6 address (no port: a port needs the brackets).
    const ip = parseIp(text);
    if (!ip || ip.family !== 6 || text.includes('%') || text.includes('[')) return undefined;
    return { kind: 'ip', value: text.toLowerCase(), port: null };
  }
  const colon = text.lastIndexOf(':');
  const hostPart = colon >= 0 ? text.slice(0, colon) : text;
  const port = colon >= 0 ? parsePort(text.slice(colon + 1)) : null;
  if (port === undefined) return undefined;
  const ip = parseIp(hostPart);
  if (ip) return ip.family === 4 ? { kind: 'ip', value: hostPart, port } : undefined;
  if (hostPart.startsWith('*.')) {
    const suffix = normalizeHostName(hostPart.slice(2));
    if (!suffix || !suffix.includes('.')) return undefined;
    return { kind: 'wildcard', value: suffix, port };
  }
  const name = normalizeHostName(hostPart);
  return name ? { kind: 'name', value: name, port } : undefined;
}

/**
 * `config.networking` from a request body (400 `invalid_request_error` naming the field for a bad shape).
 * `limited` entries are stored lower-case, trimmed and without duplicates; the booleans default to false.
 */
export function parseSandboxNetworking(v: unknown, path = 'config.networking'): SandboxNetworking {
  const o = readObject(v, path);
  const type = readEnum(o.type, `${path}.type`, ['unrestricted', 'limited'] as const);
  if (type === 'unrestricted') {
    readObject(v, path, ['type']);
    return { type };
  }
  readObject(v, path, ['type', 'allowed_hosts', 'allow_package_managers', 'allow_mcp_servers']);
  const raw =
    o.allowed_hosts === undefined
      ? []
      : readArray(o.allowed_hosts, `${path}.allowed_hosts`, { max: MAX_ALLOWED_HOSTS });
  const hosts: string[] = [];
  raw.forEach((entry, i) => {
    const at = `${path}.allowed_hosts[${i}]`;
    if (typeof entry !== 'string') throw invalidRequest(`${at} must be a string`);
    if (!parseHostRule(entry))
      throw invalidRequest(
        `${at} ${JSON.stringify(entry.slice(0, 80))} is not a host name, "*." wildcard or IP address with an optional :port (no scheme, path or range)`,
      );
    const canonical = entry.trim().toLowerCase();
    if (!hosts.includes(canonical)) hosts.push(canonical);
  });
  const flag = (name: 'allow_package_managers' | 'allow_mcp_servers') =>
    o[name] === undefined ? false : readBoolean(o[name], `${path}.${name}`);
  return {
    type,
    allowed_hosts: hosts,
    allow_package_managers: flag('allow_package_managers'),
    allow_mcp_servers: flag('allow_mcp_servers'),
  };
}
