import { isIP } from 'node:net';

/** The named ranges Express's `trust proxy` understands (proxy-addr). */
const NAMED = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * MANGO_TRUSTED_PROXIES: comma-separated addresses or CIDR ranges of the proxies in front of the app
 * (`loopback`, `linklocal`, `uniquelocal` name the usual ranges). Only a request whose peer is one of them
 * has its `X-Forwarded-For` / `X-Forwarded-Proto` believed (Express's `trust proxy`). Unset: none.
 */
export function parseTrustedProxies(value: string | undefined): { proxies: string[] } | { problem: string } {
  const entries = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = entries.filter((e) => !NAMED.includes(e) && !isAddressOrRange(e));
  if (bad.length)
    return {
      problem: `MANGO_TRUSTED_PROXIES: ${bad.map((b) => JSON.stringify(b)).join(', ')} ${bad.length === 1 ? 'is' : 'are'} not an IP address, a CIDR range or one of ${NAMED.join(', ')}`,
    };
  return { proxies: entries };
}

function isAddressOrRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (!family || rest.length) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/** The parsed list for `createHttpApp`'s `trustedProxies` (the env DTO's rule has already refused a bad one). */
export function trustedProxies(value: string | undefined): string[] {
  const parsed = parseTrustedProxies(value);
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed.proxies;
}
