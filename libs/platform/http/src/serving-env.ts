import { IsIn, IsOptional, IsString } from 'class-validator';
import { ConfigRules } from '@mango/platform-config';
import type { MangoEnvironment } from './public-base-url';
import { parseTrustedProxies } from './trusted-proxies';

type EnvClass = new (...args: any[]) => object;

interface ServingSettings {
  MANGO_TRUSTED_PROXIES?: string;
}

/**
 * What an HTTP app behind an ingress needs to know (docs/operator-guide.md "Public base URL and
 * proxies"), mixed into apps/api's and apps/files' env DTOs: whether it runs for development, and which
 * proxies' X-Forwarded-* headers it believes.
 */
export function withServingEnv<T extends EnvClass>(Base: T) {
  @ConfigRules<ServingSettings>((e) => {
    const parsed = parseTrustedProxies(e.MANGO_TRUSTED_PROXIES);
    return 'problem' in parsed ? [parsed.problem] : [];
  })
  class ServingEnv extends Base {
    /**
     * `production` (the default) or `development`. Outside development the API requires an https
     * MANGO_PUBLIC_BASE_URL; in development it may fall back to its own listen address.
     */
    @IsIn(['production', 'development'])
    MANGO_ENV: MangoEnvironment = 'production';

    /** Proxies (IPs, CIDRs, `loopback`/`linklocal`/`uniquelocal`) whose X-Forwarded-For/-Proto are believed; unset: none. */
    @IsOptional()
    @IsString()
    MANGO_TRUSTED_PROXIES?: string;
  }
  return ServingEnv;
}
