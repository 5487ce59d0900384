import { Type } from 'class-transformer';
import { IsIn, IsInt, IsString, IsUrl, Matches, Max, Min, MinLength } from 'class-validator';

/** Every variable apps/files reads, validated once at boot. */
export class FilesEnv {
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'MANGO_DATABASE_URL must be a postgres:// URL' })
  MANGO_DATABASE_URL!: string;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  MANGO_FILES_PORT: number = 8082;

  @IsString()
  MANGO_FILES_HOST: string = '127.0.0.1';

  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  MANGO_S3_ENDPOINT!: string;

  @IsString()
  @MinLength(1)
  MANGO_S3_ACCESS_KEY!: string;

  @IsString()
  @MinLength(1)
  MANGO_S3_SECRET_KEY!: string;

  @IsString()
  MANGO_S3_REGION: string = 'us-east-1';

  @Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
    message: 'MANGO_S3_BUCKET must be a valid S3 bucket name',
  })
  MANGO_S3_BUCKET: string = 'mango';

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  MANGO_LOG_LEVEL: string = 'info';
}
