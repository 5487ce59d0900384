import { HttpClient, pathSegment, RequestOptions, RequestSpec } from './core';
import type { operations } from './generated/openapi';
import { PagePromise } from './pagination';
import { streamEvents } from './resources/sessions';
import type { Page, SessionEventStreamParams, SessionStreamEvent } from './types';

// The hand-written half of the generated resource layer (src/generated/resources.ts): the calls every
// generated method makes, and the types it derives from openapi-typescript's `operations`.

/** An operationId of openapi.yaml. */
export type OperationId = keyof operations;

type Content<R> = R extends { content: infer C } ? C : never;
type Json<R> = Content<R> extends { 'application/json': infer T } ? T : never;

/** The JSON (or multipart) request body of an operation. */
export type Body<K extends OperationId> = operations[K] extends { requestBody?: infer B }
  ? Content<NonNullable<B>> extends { 'application/json': infer T }
    ? T
    : Content<NonNullable<B>> extends { 'multipart/form-data': infer M }
      ? M
      : never
  : never;

/** The query parameters of an operation. */
export type Query<K extends OperationId> = operations[K] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;

type Responses<K extends OperationId> = operations[K] extends { responses: infer R } ? R : never;

/** The 2xx JSON result of an operation. */
export type Result<K extends OperationId> = {
  [C in keyof Responses<K>]: C extends 200 | 201 | 202 | 203 ? Json<Responses<K>[C]> : never;
}[keyof Responses<K>];

/** The JSON body documented for status `C` (e.g. readiness 503). */
export type ResultAt<K extends OperationId, C extends keyof Responses<K>> = Json<Responses<K>[C]>;

/** The item type of a paged list result. */
export type Item<K extends OperationId> = Result<K> extends { data: (infer I)[] } ? I : never;

/** A part of a `multipart/form-data` upload: bytes, a Blob/File (its `name` and `type` are used) or an explicit name and type. */
export type Uploadable =
  | Blob
  | Uint8Array
  | ArrayBuffer
  | { data: Blob | Uint8Array | ArrayBuffer | string; filename: string; contentType?: string };

/** Options of an event stream (`Last-Event-ID` resume and cancellation). */
export type StreamParams = SessionEventStreamParams;

/** Base of every generated resource class. */
export abstract class GeneratedResource {
  constructor(protected readonly _http: HttpClient) {}
}

export const seg = pathSegment;

type Spec = Omit<RequestSpec, 'acceptStatuses'> & { accept?: readonly number[] };

export function callJson<T>(http: HttpClient, spec: Spec): Promise<T> {
  return http.request<T>({ ...spec, acceptStatuses: spec.accept });
}

export function callList<T, P extends Page<T>>(http: HttpClient, spec: Spec): PagePromise<T, P> {
  const query = (spec.query ?? {}) as { page?: string };
  return new PagePromise<T, P>((page) => http.request<P>({ ...spec, query: { ...query, page } }), query.page);
}

export function callUpload<T>(http: HttpClient, spec: Spec): Promise<T> {
  const form = new FormData();
  for (const [name, value] of Object.entries((spec.body ?? {}) as Record<string, unknown>)) {
    if (value === undefined) continue;
    for (const part of Array.isArray(value) ? value : [value]) appendPart(form, name, part);
  }
  return http.request<T>({ ...spec, body: undefined, form });
}

function appendPart(form: FormData, name: string, part: unknown): void {
  if (typeof part === 'string') {
    form.append(name, part);
    return;
  }
  if (part instanceof Blob) {
    const filename = (part as { name?: unknown }).name;
    form.append(name, part, typeof filename === 'string' && filename ? filename : 'blob');
    return;
  }
  if (part instanceof Uint8Array || part instanceof ArrayBuffer) {
    form.append(name, new Blob([bytesOf(part)]), 'blob');
    return;
  }
  if (part && typeof part === 'object' && 'data' in part && 'filename' in part) {
    const { data, filename, contentType } = part as {
      data: Blob | Uint8Array | ArrayBuffer | string;
      filename: string;
      contentType?: string;
    };
    const source = data instanceof Blob || typeof data === 'string' ? data : bytesOf(data);
    const blob =
      data instanceof Blob && !contentType
        ? data
        : new Blob([source], contentType ? { type: contentType } : {});
    form.append(name, blob, filename);
    return;
  }
  throw new TypeError(
    `Mango: multipart field ${name} must be a string, Blob, Uint8Array or {data, filename}`,
  );
}

// Typed as ArrayBuffer-backed so the DOM lib's Blob accepts it too (the web console compiles the SDK).
function bytesOf(data: Uint8Array | ArrayBuffer): Uint8Array<ArrayBuffer> {
  return (data instanceof Uint8Array ? data : new Uint8Array(data)) as Uint8Array<ArrayBuffer>;
}

/** A binary download: the open 2xx `Response` (read it with `arrayBuffer()`, `bytes()` or `body`). */
export function callDownload(http: HttpClient, spec: Spec): Promise<Response> {
  return http.download(spec);
}

export function callStream(
  http: HttpClient,
  path: string,
  params: StreamParams & object,
  options: RequestOptions | undefined,
): AsyncIterable<SessionStreamEvent> {
  const { lastEventId, signal, ...query } = params as StreamParams & Record<string, unknown>;
  return streamEvents(http, path, { lastEventId, signal }, options ?? {}, query);
}

// Merging the hand-written resources over the generated ones ------------------------------------------

type Fn = (...args: never[]) => unknown;

/**
 * A hand-written resource `H` (precise types, extra behaviour) over its generated counterpart `G`:
 * `H`'s members win, every operation only `G` has is added, and sub-resources merge the same way.
 */
export type Merged<H, G> = {
  [K in keyof H]: K extends keyof G
    ? H[K] extends Fn
      ? H[K]
      : G[K] extends Fn
        ? H[K]
        : Merged<H[K], G[K]>
    : H[K];
} & { [K in Exclude<keyof G, keyof H>]: G[K] };

/** Adds to `hand` every public method and sub-resource of `gen` that `hand` lacks (recursively). */
export function mergeResources<H extends object, G extends object>(hand: H, gen: G): Merged<H, G> {
  const target = hand as Record<string, unknown>;
  const source = gen as Record<string, unknown>;
  const keys = new Set<string>(Object.keys(source));
  for (
    let proto = Object.getPrototypeOf(gen);
    proto && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const key of Object.getOwnPropertyNames(proto)) if (key !== 'constructor') keys.add(key);
  }
  for (const key of keys) {
    if (key.startsWith('_')) continue;
    const value = source[key];
    if (!(key in target)) {
      Object.defineProperty(target, key, {
        value: typeof value === 'function' ? (value as Fn).bind(gen) : value,
        enumerable: typeof value !== 'function',
        configurable: true,
        writable: false,
      });
    } else if (
      typeof value === 'object' &&
      value !== null &&
      typeof target[key] === 'object' &&
      target[key] !== null
    ) {
      mergeResources(target[key] as object, value);
    }
  }
  return hand as Merged<H, G>;
}
