import { IsIn, IsOptional, IsString, IsUrl, Matches, MinLength } from 'class-validator';
import { ConfigError, loadConfig } from '@mango/platform-config';
import { ObjectStore } from '@mango/adapter-object-store';
import { backupRefused } from './backup-error';

/**
 * What `mango backup` and `mango restore` read from the environment (besides the keyring settings, read
 * as the apps read them): the database and the bucket to copy from or into — the same variables as
 * apps/files — and where the PostgreSQL client programs are (docs/operator-guide.md).
 */
export class BackupEnv {
  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'MANGO_DATABASE_URL must be a postgres:// URL' })
  MANGO_DATABASE_URL!: string;

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

  @IsIn(['signed', 'unsigned'])
  MANGO_S3_PAYLOAD_SIGNING: 'signed' | 'unsigned' = 'signed';

  /** The directory of pg_dump/pg_restore; unset: /usr/lib/postgresql/<server major>/bin, then PATH. */
  @IsOptional()
  @IsString()
  MANGO_PG_BIN_DIR?: string;
}

export function backupEnv(env: Record<string, string | undefined>): BackupEnv {
  try {
    return loadConfig(BackupEnv, env);
  } catch (e) {
    throw backupRefused(e instanceof ConfigError ? e.message : String(e));
  }
}

export function objectStoreOf(env: BackupEnv): ObjectStore {
  return new ObjectStore({
    endpoint: env.MANGO_S3_ENDPOINT,
    accessKey: env.MANGO_S3_ACCESS_KEY,
    secretKey: env.MANGO_S3_SECRET_KEY,
    region: env.MANGO_S3_REGION,
    bucket: env.MANGO_S3_BUCKET,
    payloadSigning: env.MANGO_S3_PAYLOAD_SIGNING,
  });
}
