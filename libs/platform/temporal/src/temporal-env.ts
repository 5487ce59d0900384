import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength, ValidateIf } from 'class-validator';
import { ConfigRules } from '@mango/platform-config';
import { temporalConfigProblems } from './temporal-credentials';
import type { TemporalSettings } from './temporal-settings';

type EnvClass = new (...args: any[]) => object;

/**
 * The Temporal connection settings (docs/operator-guide.md "Temporal connection"), mixed into the env DTO
 * of every process that connects: `class OrchestratorEnv extends withTemporalEnv(ObservabilityEnv, { addressRequired: true })`.
 * Contradictions and unreadable or mismatched files are listed by `loadConfig` with every other problem.
 */
export function withTemporalEnv<T extends EnvClass>(Base: T, options: { addressRequired: boolean }) {
  @ConfigRules<TemporalSettings>(temporalConfigProblems)
  class TemporalEnv extends Base implements TemporalSettings {
    /** `host:port` of Temporal's frontend. */
    @ValidateIf((e: TemporalEnv) => options.addressRequired || e.MANGO_TEMPORAL_ADDRESS !== undefined)
    @Matches(/^[^\s:]+:\d{1,5}$/, { message: 'MANGO_TEMPORAL_ADDRESS must be host:port' })
    MANGO_TEMPORAL_ADDRESS?: string;

    @IsString()
    @MinLength(1)
    MANGO_TEMPORAL_NAMESPACE: string = 'default';

    /** `on` or `off`; unset: TLS as soon as a CA, client certificate, server name or API key is set. */
    @IsOptional()
    @IsIn(['on', 'off'])
    MANGO_TEMPORAL_TLS?: 'on' | 'off';

    /** PEM CA certificate(s) that signed Temporal's server certificate (unset: the system's roots). */
    @IsOptional()
    @IsString()
    @MinLength(1)
    MANGO_TEMPORAL_TLS_CA_FILE?: string;

    /** PEM client certificate (mTLS), with MANGO_TEMPORAL_TLS_KEY_FILE. */
    @IsOptional()
    @IsString()
    @MinLength(1)
    MANGO_TEMPORAL_TLS_CERT_FILE?: string;

    /** PEM private key of the client certificate. */
    @IsOptional()
    @IsString()
    @MinLength(1)
    MANGO_TEMPORAL_TLS_KEY_FILE?: string;

    /** The name checked in the server certificate (and sent as SNI) instead of the address's host. */
    @IsOptional()
    @IsString()
    @MinLength(1)
    MANGO_TEMPORAL_TLS_SERVER_NAME?: string;

    /** A Temporal API key (Temporal Cloud), sent as `Authorization: Bearer`; or MANGO_TEMPORAL_API_KEY_FILE. */
    @IsOptional()
    @IsString()
    @MinLength(1)
    MANGO_TEMPORAL_API_KEY?: string;

    /** A file holding the API key (re-read when it changes). */
    @IsOptional()
    @IsString()
    @MinLength(1)
    MANGO_TEMPORAL_API_KEY_FILE?: string;

    /**
     * Seconds between checks of the certificate, key and API key files for a rotation (a new API key is
     * used at once; new certificates restart the process, see the operator guide); 0: never checked.
     */
    @Type(() => Number)
    @IsInt()
    @Min(0)
    @Max(86_400)
    MANGO_TEMPORAL_CREDENTIALS_CHECK_SECONDS: number = 30;
  }
  return TemporalEnv;
}
