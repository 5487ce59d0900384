import { isIP } from 'node:net';
import type { ControlPlane } from '@mango/domain-egress';
import { normalizeHostName } from '@mango/domain-egress';
import { parseIp } from '@mango/domain-kernel';
import { type Resolver, systemResolver } from '@mango/platform-egress';

/**
 * The operator's side of sandbox egress (docs/operator-guide.md "Sandbox egress"): pinned names for the
 * proxy's resolver, and where the control plane listens (never reachable from a sandbox).
 */

/**
 * `MANGO_WORKER_EGRESS_HOSTS`: `name=address` pairs, comma-separated (several addresses for one name with
 * `|`), like Docker's `--add-host`: the proxy resolves these names to these addresses without DNS. The
 * addresses are still judged like any others. Throws with a message naming the bad entry.
 */
export function parseEgressHostPins(raw: string | undefined): Map<string, string[]> {
  const pins = new Map<string, string[]>();
  if (!raw || raw.trim() === '') return pins;
  for (const entry of raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const eq = entry.indexOf('=');
    const name = eq > 0 ? normalizeHostName(entry.slice(0, eq)) : undefined;
    const addresses =
      eq > 0
        ? entry
            .slice(eq + 1)
            .split('|')
            .map((a) => a.trim())
        : [];
    if (!name || addresses.length === 0 || !addresses.every((a) => parseIp(a) && !a.includes('%')))
      throw new Error(`MANGO_WORKER_EGRESS_HOSTS: "${entry}" is not name=address (address|address …)`);
    pins.set(name, addresses);
  }
  return pins;
}

/** A resolver that answers pinned names itself and asks `fallback` (the system's) for the rest. */
export function pinnedResolver(pins: Map<string, string[]>, fallback: Resolver = systemResolver): Resolver {
  return async (host) => {
    const pinned = pins.get(normalizeHostName(host) ?? '');
    if (pinned) return pinned.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
    return fallback(host);
  };
}

/**
 * The control plane as the supervisor reaches it (MANGO_BASE_URL): every address its host resolves to (by
 * the system resolver, never the pins) and its port. Unresolvable: no addresses, and the caller warns.
 */
export async function controlPlaneOf(
  baseUrl: string,
  resolve: Resolver = systemResolver,
): Promise<ControlPlane> {
  const url = new URL(baseUrl);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return { addresses: [host], port };
  const found = await resolve(host).catch(() => []);
  return { addresses: found.map((a) => a.address), port };
}
