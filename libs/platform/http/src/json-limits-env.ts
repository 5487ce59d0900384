import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

type EnvClass = new (...args: any[]) => object;

/**
 * The JSON parse limits (json-limits.ts), mixed into the env DTO of each app that parses request bodies
 * (apps/api and apps/files read the same names): `class ApiEnv extends withJsonLimitsEnv(ObservabilityEnv)`.
 */
export function withJsonLimitsEnv<T extends EnvClass>(Base: T) {
  class JsonLimitsEnv extends Base {
    /** Deepest nesting of arrays and objects in a JSON request body; deeper is 400 (default 128). */
    @Type(() => Number)
    @IsInt()
    @Min(8)
    @Max(10_000)
    MANGO_MAX_JSON_DEPTH: number = 128;

    /** Most values (array elements and object members) in a JSON request body; more is 413 (default 1,000,000). */
    @Type(() => Number)
    @IsInt()
    @Min(1_000)
    @Max(100_000_000)
    MANGO_MAX_JSON_VALUES: number = 1_000_000;
  }
  return JsonLimitsEnv;
}
