import { randomBytes } from 'node:crypto';
import { Client } from 'minio';
import { answers, AppProcess, freePort, startApp } from './app-process';

/** The S3 settings of one fresh bucket (for apps/files, and apps/api when it reads File text). */
export function freshBucketEnv(label: string): Record<string, string> {
  return {
    MANGO_S3_ENDPOINT: process.env.MANGO_S3_ENDPOINT!,
    MANGO_S3_ACCESS_KEY: process.env.MANGO_S3_ACCESS_KEY!,
    MANGO_S3_SECRET_KEY: process.env.MANGO_S3_SECRET_KEY!,
    MANGO_S3_REGION: process.env.MANGO_S3_REGION ?? 'us-east-1',
    MANGO_S3_BUCKET: `mango-${label}-${randomBytes(3).toString('hex')}`,
  };
}

/** A real apps/files process on `databaseUrl` and the bucket of `s3` (from freshBucketEnv). */
export async function startFilesApp(
  databaseUrl: string,
  s3: Record<string, string>,
): Promise<{ url: string; app: AppProcess }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const app = await startApp(
    'apps/files/src/main.ts',
    { MANGO_DATABASE_URL: databaseUrl, MANGO_FILES_PORT: String(port), MANGO_LOG_LEVEL: 'warn', ...s3 },
    answers(`${url}/healthz`),
  );
  return { url, app };
}

/** Empties and removes the bucket of `s3`. */
export async function dropBucket(s3: Record<string, string>): Promise<void> {
  const endpoint = new URL(s3.MANGO_S3_ENDPOINT!);
  const client = new Client({
    endPoint: endpoint.hostname,
    port: Number(endpoint.port),
    useSSL: endpoint.protocol === 'https:',
    accessKey: s3.MANGO_S3_ACCESS_KEY!,
    secretKey: s3.MANGO_S3_SECRET_KEY!,
    region: s3.MANGO_S3_REGION!,
  });
  const bucket = s3.MANGO_S3_BUCKET!;
  if (!(await client.bucketExists(bucket))) return;
  const names: string[] = [];
  for await (const o of client.listObjectsV2(bucket, '', true)) if (o.name) names.push(o.name);
  if (names.length) await client.removeObjects(bucket, names);
  await client.removeBucket(bucket);
}
