import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { ObjectStore } from '@mango/adapter-object-store';
import { ApiKeysService, digestCredential, generateCredential } from '@mango/feature-auth';
import {
  DEFAULT_FILES_SETTINGS,
  FileObjects,
  FilesSettings,
  ObjectCleanupRepository,
  ObjectCleanupSweeper,
} from '@mango/feature-files';
import { createDataSource } from '@mango/persistence';
import { newId } from '@mango/platform-ids';
import {
  answers,
  AppProcess,
  assertMatchesContract,
  createTestDatabase,
  freePort,
  startApp,
  TestDatabase,
} from '@mango/testing';
import type { DataSource } from 'typeorm';

export const MIB = 1024 * 1024;

export interface FilesProcess {
  url: string;
  app: AppProcess;
}

/**
 * Real apps/files processes on one test database and one fresh bucket, plus direct access to both for
 * asserting what was (not) stored.
 */
export interface FilesUnderTest extends FilesProcess {
  db: TestDatabase;
  ds: DataSource;
  store: ObjectStore;
  sql<T = any>(text: string, params?: unknown[]): Promise<T[]>;
  issueKey(workspaceId: string, environmentId?: string): Promise<{ id: string; api_key: string }>;
  createWorkspace(): Promise<string>;
  createEnvironment(workspaceId: string): Promise<string>;
  /** A live Work token of a new healthcheck Work item. */
  createWorkToken(workspaceId: string, environmentId: string): Promise<string>;
  /** Another apps/files process on the same database and bucket. */
  startProcess(env?: Record<string, string>): Promise<FilesProcess>;
  /** A sweeper run from the test process against the same database and bucket. */
  sweeper(settings?: Partial<FilesSettings>): ObjectCleanupSweeper;
  objectKeys(): Promise<string[]>;
  incompleteUploads(): Promise<string[]>;
  /** Files rows, cleanup rows, objects and unfinished multipart uploads, for "nothing stored" checks. */
  stored(): Promise<{ files: number; cleanups: number; objects: string[]; incomplete: string[] }>;
  close(): Promise<void>;
}

const s3 = () => ({
  endpoint: process.env.MANGO_S3_ENDPOINT!,
  accessKey: process.env.MANGO_S3_ACCESS_KEY!,
  secretKey: process.env.MANGO_S3_SECRET_KEY!,
  region: process.env.MANGO_S3_REGION ?? 'us-east-1',
});

export async function startFiles(label: string, env: Record<string, string> = {}): Promise<FilesUnderTest> {
  const db = await createTestDatabase(label);
  const bucket = `mango-${label.replace(/[^a-z0-9]/g, '').slice(0, 20)}-${randomBytes(3).toString('hex')}`;
  const processes: AppProcess[] = [];
  const startProcess = async (extra: Record<string, string> = {}): Promise<FilesProcess> => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const app = await startApp(
      'apps/files/src/main.ts',
      {
        MANGO_DATABASE_URL: db.url,
        MANGO_FILES_PORT: String(port),
        MANGO_S3_ENDPOINT: s3().endpoint,
        MANGO_S3_ACCESS_KEY: s3().accessKey,
        MANGO_S3_SECRET_KEY: s3().secretKey,
        MANGO_S3_REGION: s3().region,
        MANGO_S3_BUCKET: bucket,
        MANGO_LOG_LEVEL: 'warn',
        ...env,
        ...extra,
      },
      answers(`${url}/healthz`),
    );
    processes.push(app);
    return { url, app };
  };
  const first = await startProcess();
  const ds = await createDataSource({ url: db.url, poolSize: 4 }).initialize();
  const store = new ObjectStore({ ...s3(), bucket });
  const keys = new ApiKeysService(ds);
  const sql = async <T>(text: string, params?: unknown[]): Promise<T[]> => ds.query(text, params);
  const objectKeys = async (): Promise<string[]> => {
    const keys: string[] = [];
    for await (const o of store.client.listObjectsV2(bucket, '', true)) if (o.name) keys.push(o.name);
    return keys.sort();
  };
  const incompleteUploads = async (): Promise<string[]> =>
    (await store.unfinishedUploads()).map((u) => u.key);
  return {
    ...first,
    db,
    ds,
    store,
    sql,
    issueKey: (workspaceId, environmentId) => keys.create({ workspaceId, environmentId, label: 'test' }),
    createWorkspace: async () => {
      const id = newId('workspace');
      await sql('INSERT INTO workspaces (id, name) VALUES ($1, $2)', [id, 'other']);
      return id;
    },
    createEnvironment: async (workspaceId) => {
      const id = newId('environment');
      await sql(
        `INSERT INTO environments (id, workspace_id, name, config, metadata, created_at, updated_at)
         VALUES ($1, $2, $1, '{"type":"self_hosted"}', '{}', now(), now())`,
        [id, workspaceId],
      );
      return id;
    },
    createWorkToken: async (workspaceId, environmentId) => {
      const token = generateCredential('workToken');
      await sql(
        `INSERT INTO work_items (id, workspace_id, environment_id, kind, state, metadata, token_digest,
                                 created_at, claimed_at, acknowledged_at, started_at, latest_heartbeat_at,
                                 lease_expires_at, ttl_seconds, expires_at)
         VALUES ($1, $2, $3, 'healthcheck', 'active', '{}', $4, now(), now(), now(), now(), now(),
                 now() + interval '5 minutes', 300, now() + interval '10 minutes')`,
        [newId('work'), workspaceId, environmentId, digestCredential(token)],
      );
      return token;
    },
    startProcess,
    sweeper: (settings = {}) => {
      const all = { ...DEFAULT_FILES_SETTINGS, ...settings };
      return new ObjectCleanupSweeper(new ObjectCleanupRepository(ds), new FileObjects(store, all), all);
    },
    objectKeys,
    incompleteUploads,
    stored: async () => {
      const [{ files }] = await sql<{ files: number }>('SELECT count(*)::int AS files FROM files');
      const [{ cleanups }] = await sql<{ cleanups: number }>(
        'SELECT count(*)::int AS cleanups FROM object_cleanups',
      );
      return { files, cleanups, objects: await objectKeys(), incomplete: await incompleteUploads() };
    },
    close: async () => {
      await Promise.all(processes.map((p) => p.stop()));
      await ds.destroy();
      await db.drop();
      await dropBucket(store);
    },
  };
}

async function dropBucket(store: ObjectStore): Promise<void> {
  const names: string[] = [];
  for await (const o of store.client.listObjectsV2(store.bucket, '', true)) if (o.name) names.push(o.name);
  for (const u of await store.unfinishedUploads())
    await store.client.abortMultipartUpload(store.bucket, u.key, u.uploadId);
  if (names.length > 0) await store.client.removeObjects(store.bucket, names);
  await store.client.removeBucket(store.bucket).catch(() => undefined);
}

export interface UploadResult<T = any> {
  status: number;
  body: T;
}

/** POST /v1/files with a FormData `file` part (fetch sets Content-Length); checked against the contract. */
export async function upload(
  url: string,
  credential: string,
  bytes: Buffer,
  filename = 'notes.txt',
  mimeType = 'text/plain',
): Promise<UploadResult> {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: mimeType }), filename);
  return sendForm(url, credential, form);
}

export async function sendForm(url: string, credential: string, form: FormData): Promise<UploadResult> {
  const res = await fetch(`${url}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}` },
    body: form,
  });
  const body = await res.json();
  assertMatchesContract('POST', '/v1/files', res.status, body);
  return { status: res.status, body };
}

/** GET /v1/files/{id}/content: the raw bytes and headers (errors are checked against the contract). */
export async function download(
  url: string,
  credential: string,
  fileId: string,
): Promise<{ status: number; bytes: Buffer; headers: Headers; body?: any }> {
  const path = `/v1/files/${fileId}/content`;
  const res = await fetch(url + path, { headers: { authorization: `Bearer ${credential}` } });
  const bytes = Buffer.from(await res.arrayBuffer());
  if (res.status === 200) return { status: 200, bytes, headers: res.headers };
  const body = JSON.parse(bytes.toString('utf8'));
  assertMatchesContract('GET', path, res.status, body);
  return { status: res.status, bytes, headers: res.headers, body };
}

/** Multipart framing around one part, for hand-built bodies. */
export function multipart(
  parts: Array<{ headers: string; body: Buffer | string }>,
  boundary = `----mango${randomBytes(8).toString('hex')}`,
): { boundary: string; contentType: string; body: Buffer } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n${p.headers}\r\n\r\n`));
    chunks.push(Buffer.isBuffer(p.body) ? p.body : Buffer.from(p.body));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { boundary, contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(chunks) };
}

export const filePart = (body: Buffer | string, filename = 'a.bin', type = 'application/octet-stream') => ({
  headers: `Content-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}`,
  body,
});

/**
 * Sends a body in pieces over one HTTP/1.1 request, with chunked transfer encoding unless
 * `contentLength` is given, pausing `delayMs` between pieces. `onSent(i)` runs after piece i.
 */
export function rawPost(
  url: string,
  credential: string,
  contentType: string,
  pieces: Buffer[],
  opts: { delayMs?: number; contentLength?: number; onSent?: (i: number) => Promise<void> | void } = {},
): Promise<UploadResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${credential}`,
      'content-type': contentType,
    };
    if (opts.contentLength !== undefined) headers['content-length'] = String(opts.contentLength);
    const req = request(`${url}/v1/files`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const body = text ? JSON.parse(text) : undefined;
        try {
          assertMatchesContract('POST', '/v1/files', res.statusCode!, body);
          resolve({ status: res.statusCode!, body });
        } catch (e) {
          reject(e);
        }
      });
    });
    req.on('error', reject);
    void (async () => {
      for (const [i, piece] of pieces.entries()) {
        if (req.destroyed) return;
        if (!req.write(piece)) await new Promise((r) => req.once('drain', r));
        await opts.onSent?.(i);
        if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
      }
      req.end();
    })().catch(reject);
  });
}

/** Splits a buffer into `n` nearly equal pieces. */
export function split(buf: Buffer, n: number): Buffer[] {
  const size = Math.ceil(buf.length / n);
  return Array.from({ length: n }, (_, i) => buf.subarray(i * size, (i + 1) * size)).filter(
    (b) => b.length > 0,
  );
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
