import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, Min, MinLength } from 'class-validator';

/**
 * The metrics listener's variables, shared by every app's env DTO (each extends this class). Without
 * `MANGO_METRICS_PORT` an app serves no metrics; `0` picks a free port (tests).
 */
export class MetricsEnv {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  MANGO_METRICS_PORT?: number;

  /** Interface of the metrics listener (default loopback; `0.0.0.0` in a pod so Prometheus can scrape). */
  @IsString()
  @MinLength(1)
  MANGO_METRICS_HOST: string = '127.0.0.1';
}
