/** How the process knows it runs for development (a laptop, the test suites) rather than for users. */
export type MangoEnvironment = 'production' | 'development';

interface PublicBaseUrlSettings {
  MANGO_ENV: MangoEnvironment;
  MANGO_PUBLIC_BASE_URL?: string;
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * Outside development (MANGO_ENV=production, the default) MANGO_PUBLIC_BASE_URL is required — it is the
 * address Work secrets give to workers, and nothing the request says may replace it — and it must be
 * https, unless it names the machine itself (loopback: a one-host install whose traffic never leaves it).
 */
export function publicBaseUrlProblems(s: PublicBaseUrlSettings): string[] {
  if (s.MANGO_ENV === 'development') return [];
  if (!s.MANGO_PUBLIC_BASE_URL)
    return [
      'MANGO_PUBLIC_BASE_URL is required outside development: the https:// URL clients and workers reach the API at (or MANGO_ENV=development)',
    ];
  let url: URL;
  try {
    url = new URL(s.MANGO_PUBLIC_BASE_URL);
  } catch {
    return []; // the per-variable rule names it
  }
  if (url.protocol !== 'https:' && !LOOPBACK.test(url.hostname))
    return [
      'MANGO_PUBLIC_BASE_URL must be https:// outside development (http:// only for a loopback address)',
    ];
  return [];
}

/**
 * The base URL of the API for Work secrets: MANGO_PUBLIC_BASE_URL, or in development the API's own listen
 * address (a wildcard host becomes 127.0.0.1). Never derived from a request.
 */
export function resolvePublicBaseUrl(
  s: PublicBaseUrlSettings,
  listen: { host: string; port: number },
): string {
  if (s.MANGO_PUBLIC_BASE_URL) return s.MANGO_PUBLIC_BASE_URL;
  if (s.MANGO_ENV !== 'development') throw new Error('MANGO_PUBLIC_BASE_URL is required outside development');
  const wildcard = ['0.0.0.0', '::', ''].includes(listen.host);
  const host = wildcard ? '127.0.0.1' : listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  return `http://${host}:${listen.port}`;
}
