/**
 * Request smuggling and desynchronisation payloads, as a hostile sandbox writes them raw onto its Work API
 * socket (issue #34): the CL.TE, TE.CL and TE.TE (obfuscated Transfer-Encoding) families, Content-Length
 * anomalies, pipelining, protocol switches and path tricks. Every payload hides a request for a route a
 * Work token may not call (`GET /v1/agents?smuggled=<name>`), so a recording upstream shows at once
 * whether any of it got through. Used by the socket's own test (raw `net`) and by the sandbox test that
 * writes them from inside a real container.
 */
export const S = 'sesn_01JABCDEFGHJKMNPQRSTVWXYZ0';
export const E = 'env_01JABCDEFGHJKMNPQRSTVWXYZ0';
export const W = 'work_01JABCDEFGHJKMNPQRSTVWXYZ0';

export interface DesyncPayload {
  name: string;
  family: 'CL.TE' | 'TE.CL' | 'TE.TE' | 'CL' | 'body-on-bodiless' | 'pipelining' | 'protocol' | 'path';
  /** The bytes, written in one piece (latin1: one char = one byte). */
  raw: string;
  /** The status of the one response the socket answers before it closes the connection. */
  status: 400 | 403 | 413;
}

const smuggled = (name: string) => `GET /v1/agents?smuggled=${name} HTTP/1.1\r\nHost: mango.sandbox\r\n\r\n`;
const chunk = (data: string) => `${data.length.toString(16)}\r\n${data}\r\n`;
const events = `/v1/sessions/${S}/events`;
const H = 'Host: mango.sandbox\r\nAuthorization: Bearer wrk_attacker\r\n';

function family(
  fam: DesyncPayload['family'],
  status: DesyncPayload['status'],
  list: Record<string, (name: string) => string>,
): DesyncPayload[] {
  return Object.entries(list).map(([name, raw]) => ({ name, family: fam, raw: raw(name), status }));
}

export const DESYNC_PAYLOADS: readonly DesyncPayload[] = [
  // The measured attack: a GET whose chunked body is a complete second request.
  ...family('TE.TE', 400, {
    'te-get-chunked': (n) =>
      `GET ${events} HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
    'te-post-chunked': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
    'te-space-before-colon': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Transfer-Encoding : chunked\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
    'te-xchunked': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Transfer-Encoding: xchunked\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
    'te-tab': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Transfer-Encoding:\tchunked\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
    'te-duplicated': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
    'te-folded': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Transfer-Encoding:\r\n chunked\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
    'te-uppercase': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}TRANSFER-ENCODING: CHUNKED\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
    'te-list': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Transfer-Encoding: gzip, chunked\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
    'te-trailing-space': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Transfer-Encoding: chunked \r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
    'te-chunk-extension': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n${smuggled(n).length.toString(16)};x=y\r\n${smuggled(n)}\r\n0\r\n\r\n`,
    'te-identity': (n) => `POST ${events} HTTP/1.1\r\n${H}Transfer-Encoding: identity\r\n\r\n${smuggled(n)}`,
  }),
  ...family('CL.TE', 400, {
    'clte-basic': (n) => {
      const body = `0\r\n\r\n${smuggled(n)}`;
      return `POST ${events} HTTP/1.1\r\n${H}Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n${body}`;
    },
    'clte-te-first': (n) => {
      const body = `0\r\n\r\n${smuggled(n)}`;
      return `POST ${events} HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    },
    'clte-get': (n) => {
      const body = `0\r\n\r\n${smuggled(n)}`;
      return `GET ${events} HTTP/1.1\r\n${H}Content-Length: ${body.length}\r\nTransfer-Encoding: chunked\r\n\r\n${body}`;
    },
  }),
  ...family('TE.CL', 400, {
    'tecl-basic': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
    'tecl-zero': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Content-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
    'tecl-obfuscated': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Content-Length: 4\r\nTransfer-Encoding:\tchunked\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
  }),
  ...family('CL', 400, {
    'cl-duplicate-equal': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}${smuggled(n)}`,
    'cl-duplicate-differ': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Content-Length: 2\r\nContent-Length: ${2 + smuggled(n).length}\r\n\r\n{}${smuggled(n)}`,
    'cl-list': (n) => `POST ${events} HTTP/1.1\r\n${H}Content-Length: 2, 2\r\n\r\n{}${smuggled(n)}`,
    'cl-plus': (n) => `POST ${events} HTTP/1.1\r\n${H}Content-Length: +2\r\n\r\n{}${smuggled(n)}`,
    'cl-negative': (n) => `POST ${events} HTTP/1.1\r\n${H}Content-Length: -1\r\n\r\n{}${smuggled(n)}`,
    'cl-hex': (n) => `POST ${events} HTTP/1.1\r\n${H}Content-Length: 0x2\r\n\r\n{}${smuggled(n)}`,
    'cl-space-before-colon': (n) =>
      `POST ${events} HTTP/1.1\r\n${H}Content-Length : 2\r\n\r\n{}${smuggled(n)}`,
    'cl-folded': (n) => `POST ${events} HTTP/1.1\r\n${H}Content-Length:\r\n 2\r\n\r\n{}${smuggled(n)}`,
  }),
  ...family('CL', 413, {
    'cl-over-cap': (n) => `POST ${events} HTTP/1.1\r\n${H}Content-Length: 99999999\r\n\r\n${smuggled(n)}`,
  }),
  ...family('body-on-bodiless', 400, {
    'get-with-body': (n) =>
      `GET ${events} HTTP/1.1\r\n${H}Content-Length: ${smuggled(n).length}\r\n\r\n${smuggled(n)}`,
    'delete-with-body': (n) =>
      `DELETE /v1/memory_stores/memstore_1/memories/mem_1 HTTP/1.1\r\n${H}Content-Length: ${smuggled(n).length}\r\n\r\n${smuggled(n)}`,
    'head-with-body': (n) =>
      `HEAD /v1/sessions/${S} HTTP/1.1\r\n${H}Content-Length: ${smuggled(n).length}\r\n\r\n${smuggled(n)}`,
  }),
  ...family('pipelining', 400, {
    'pipe-two-requests': (n) => `GET /v1/sessions/${S} HTTP/1.1\r\n${H}\r\n${smuggled(n)}`,
    'pipe-two-allowed': () => `GET /v1/sessions/${S} HTTP/1.1\r\n${H}\r\nGET ${events} HTTP/1.1\r\n${H}\r\n`,
    'pipe-body-overrun': (n) => `POST ${events} HTTP/1.1\r\n${H}Content-Length: 2\r\n\r\n{}${smuggled(n)}`,
    'pipe-three': (n) =>
      `GET /v1/sessions/${S} HTTP/1.1\r\n${H}\r\nGET ${events} HTTP/1.1\r\n${H}\r\n${smuggled(n)}`,
    'pipe-garbage-after': () => `GET /v1/sessions/${S} HTTP/1.1\r\n${H}\r\nthis is not http\r\n\r\n`,
  }),
  ...family('protocol', 400, {
    'http-1.0': (n) => `GET /v1/sessions/${S} HTTP/1.0\r\n${H}Connection: keep-alive\r\n\r\n${smuggled(n)}`,
    'no-host': (n) => `GET /v1/sessions/${S} HTTP/1.1\r\nAuthorization: Bearer x\r\n\r\n${smuggled(n)}`,
    'two-hosts': (n) => `GET /v1/sessions/${S} HTTP/1.1\r\n${H}Host: other\r\n\r\n${smuggled(n)}`,
    'upgrade-h2c': (n) =>
      `GET /v1/sessions/${S} HTTP/1.1\r\n${H}Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n${smuggled(n)}`,
    'upgrade-websocket': (n) =>
      `GET ${events}/stream HTTP/1.1\r\n${H}Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n${smuggled(n)}`,
    connect: (n) => `CONNECT 127.0.0.1:8081 HTTP/1.1\r\nHost: 127.0.0.1:8081\r\n\r\n${smuggled(n)}`,
    'bare-lf': (n) => `GET /v1/sessions/${S} HTTP/1.1\nHost: mango.sandbox\n\n${smuggled(n)}`,
    'nul-in-header': (n) => `GET /v1/sessions/${S} HTTP/1.1\r\n${H}X-A: a\0b\r\n\r\n${smuggled(n)}`,
    'folded-header': (n) => `GET /v1/sessions/${S} HTTP/1.1\r\n${H}X-A: a\r\n b\r\n\r\n${smuggled(n)}`,
    'many-headers': (n) =>
      `GET /v1/sessions/${S} HTTP/1.1\r\n${H}${Array.from({ length: 80 }, (_, i) => `X-${i}: 1\r\n`).join('')}Transfer-Encoding:\tchunked\r\n\r\n${chunk(smuggled(n))}0\r\n\r\n`,
  }),
  ...family('path', 403, {
    'path-dot-dot': () => `GET /v1/../v1/agents HTTP/1.1\r\n${H}\r\n`,
    'path-session-dot-dot': () => `GET /v1/sessions/${S}/../../agents HTTP/1.1\r\n${H}\r\n`,
    'path-encoded-dots': () => `GET /v1/sessions/%2e%2e/%2e%2e/agents HTTP/1.1\r\n${H}\r\n`,
    'path-encoded-slash': () => `GET /v1/sessions/${S}%2f..%2f..%2fagents HTTP/1.1\r\n${H}\r\n`,
    'path-double-slash': () => `GET //v1/agents HTTP/1.1\r\n${H}\r\n`,
    'path-inner-double-slash': () => `GET /v1//sessions/${S} HTTP/1.1\r\n${H}\r\n`,
    'path-absolute-form': () => `GET http://mango.sandbox/v1/agents HTTP/1.1\r\n${H}\r\n`,
    'path-absolute-form-allowed': () => `GET http://127.0.0.1:8081/v1/sessions/${S} HTTP/1.1\r\n${H}\r\n`,
    'path-encoded-query': () => `GET /v1/sessions/${S}%3f/../../../agents HTTP/1.1\r\n${H}\r\n`,
    'path-backslash': () => `GET /v1/sessions/${S}\\..\\..\\agents HTTP/1.1\r\n${H}\r\n`,
    'path-fragment': () => `GET /v1/sessions/${S}#/../../agents HTTP/1.1\r\n${H}\r\n`,
    'path-asterisk': () => `OPTIONS * HTTP/1.1\r\n${H}\r\n`,
  }),
];

/** Requests the runner legitimately sends: each must reach the upstream with exactly these bytes. */
export interface LegitimateRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  body: string;
}

export function legitimateRequests(tag: string): LegitimateRequest[] {
  const text = `${tag}:` + 'é\u0001"'.repeat(64);
  return [
    { method: 'GET', path: `/v1/sessions/${S}?tag=${tag}`, body: '' },
    { method: 'GET', path: `${events}?limit=100&order=asc&tag=${tag}`, body: '' },
    { method: 'POST', path: events, body: JSON.stringify({ events: [{ type: 'user.tool_result', text }] }) },
    { method: 'POST', path: `/v1/environments/${E}/work/${W}/heartbeat`, body: JSON.stringify({ tag }) },
    { method: 'POST', path: `/v1/environments/${E}/work/${W}/stop`, body: '' },
    { method: 'DELETE', path: `/v1/memory_stores/memstore_1/memories/mem_1?tag=${tag}`, body: '' },
  ];
}

/** One legitimate request as bytes (latin1), with its own Content-Length (none for a bodiless method). */
export function rawRequest(r: LegitimateRequest, token: string, keepAlive = false): string {
  const bytes = Buffer.byteLength(r.body);
  const body = Buffer.from(r.body, 'utf8').toString('latin1');
  const length = r.method === 'POST' ? `Content-Type: application/json\r\nContent-Length: ${bytes}\r\n` : '';
  return (
    `${r.method} ${r.path} HTTP/1.1\r\nHost: mango.sandbox\r\nAuthorization: Bearer ${token}\r\n${length}` +
    `${keepAlive ? '' : 'Connection: close\r\n'}\r\n${body}`
  );
}
