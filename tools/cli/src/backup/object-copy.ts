import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { ObjectStore } from '@mango/adapter-object-store';
import { FileObjects, isMissingObject } from '@mango/feature-files';
import { backupRefused, targetNotEmpty } from './backup-error';

/** The part size of restored objects (and so the memory one upload holds). */
const RESTORE_PART_BYTES = 8 * 1024 * 1024;

/** One object as listed: its key and size (its bytes are read later, one object at a time). */
export interface ListedObject {
  key: string;
  bytes: number;
}

/**
 * Every object of the bucket (Files, Skill versions, Memory versions, kept MCP results), sorted by key.
 * Unfinished multipart uploads are not objects and are not listed: an upload in flight is either committed
 * in the dump (and then its object is listed) or abandoned (its cleanup intent is in the dump).
 */
export async function listObjects(store: ObjectStore): Promise<ListedObject[]> {
  const out: ListedObject[] = [];
  for await (const o of store.client.listObjectsV2(store.bucket, '', true))
    if (o.name) out.push({ key: o.name, bytes: o.size ?? 0 });
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** An object's bytes and content type, or null when it was deleted since the listing. */
export async function openObject(
  store: ObjectStore,
  key: string,
): Promise<{ body: Readable; contentType: string } | null> {
  try {
    const body = await store.client.getObject(store.bucket, key);
    const type = (body as unknown as IncomingMessage).headers?.['content-type'];
    return { body, contentType: typeof type === 'string' ? type : 'application/octet-stream' };
  } catch (e) {
    if (isMissingObject(e)) return null;
    throw e;
  }
}

/** Passes chunks through while hashing them (SHA-256) and counting bytes. */
export function digesting<T extends Uint8Array>(source: AsyncIterable<T>) {
  const hash = createHash('sha256');
  const state = { bytes: 0, sha256: '' };
  const body = (async function* () {
    for await (const chunk of source) {
      hash.update(chunk);
      state.bytes += chunk.length;
      yield chunk;
    }
    state.sha256 = hash.digest('hex');
  })();
  return { body, state };
}

/** The restore target must be an empty bucket (created when missing): refuses one with any object. */
export async function assertEmptyBucket(store: ObjectStore): Promise<void> {
  await store.ensureBucket();
  for await (const o of store.client.listObjectsV2(store.bucket, '', true)) {
    if (o.name)
      throw targetNotEmpty(
        `the bucket ${store.bucket} is not empty (it holds ${JSON.stringify(o.name.slice(0, 100))}, …): ` +
          'restore into a new, empty bucket (MANGO_S3_BUCKET); nothing was restored',
      );
  }
}

/**
 * Writes one object from the archive and checks what was sent against the manifest's size and SHA-256
 * (the bytes are hashed as they go out). A mismatch means the archive changed since it was verified.
 */
export async function putObject(
  store: ObjectStore,
  object: { key: string; bytes: number; sha256: string; content_type: string },
  body: AsyncIterable<Buffer>,
): Promise<void> {
  const d = digesting(body);
  // Written as apps/files writes Files: one part in memory at a time, multipart above it, aborted on failure.
  await new FileObjects(store, { partBytes: RESTORE_PART_BYTES, maxBytes: Math.max(object.bytes, 1) }).write(
    object.key,
    Readable.from(d.body),
    { contentType: object.content_type },
  );
  if (d.state.bytes !== object.bytes || d.state.sha256 !== object.sha256)
    throw backupRefused(
      `object ${object.key} in the archive does not match its manifest digest (the archive changed while it was restored)`,
    );
}
