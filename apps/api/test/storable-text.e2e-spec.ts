import { connect } from 'node:net';
import {
  ApiUnderTest,
  AppProcess,
  dropBucket,
  FILES_ROUTES,
  freshBucketEnv,
  httpClient,
  HttpClient,
  openApi,
  startApi,
  startFilesApp,
  startIngress,
} from '@mango/testing';

/**
 * Text PostgreSQL cannot store (NUL, unpaired UTF-16 surrogates) in any field of any route, through the
 * deployment's ingress to the real apps/api and apps/files on real PostgreSQL and S3: 400
 * `invalid_request_error` naming the field, and nothing stored. The table is generated from openapi.yaml
 * (every path and query parameter, every header parameter, every string reachable in a JSON body
 * schema — values and the keys of free-form maps — and every multipart field and filename), so a new
 * route or field is covered without editing this file.
 */

type Json = Record<string, any>;
type Seg = string | number;
type Location = 'body' | 'query' | 'path' | 'header' | 'form';

interface Case {
  name: string;
  method: string;
  /** Request target, already encoded. */
  url: string;
  body?: unknown;
  form?: { name: string; filename?: string; value: Buffer };
  header?: { name: string; value: Buffer };
  field: string;
  location: Location;
  reason: 'nul_character' | 'lone_surrogate' | 'invalid_utf8';
}

const doc = openApi() as unknown as Json;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The JSON path the API reports: `a.b`, `a[0]`, `a["x y"]`. */
function render(path: Seg[]): string {
  return path.reduce<string>((out, s) => {
    if (typeof s === 'number') return `${out}[${s}]`;
    if (IDENTIFIER.test(s)) return out === '' ? s : `${out}.${s}`;
    return `${out}[${JSON.stringify(s)}]`;
  }, '');
}

function resolve(node: Json | undefined): Json | undefined {
  let n = node;
  for (let i = 0; n?.$ref && i < 20; i++) {
    n = String(n.$ref)
      .replace(/^#\//, '')
      .split('/')
      .reduce<Json | undefined>((o, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return n;
}

const typesOf = (s: Json): string[] => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);
const acceptsString = (s: Json) =>
  typesOf(s).includes('string') ||
  typeof s.const === 'string' ||
  (Array.isArray(s.enum) && s.enum.some((v: unknown) => typeof v === 'string'));

/**
 * Every place a string can sit in a JSON body of `schema`: string values (`key: false`) and keys of
 * free-form maps (`key: true`, path of the map). Recursive schemas are cut at a depth.
 */
function textPaths(
  schema: Json | undefined,
  path: Seg[],
  depth: number,
  out: Array<{ path: Seg[]; key: boolean }>,
) {
  const s = resolve(schema);
  if (!s || typeof s !== 'object' || depth > 8) return;
  for (const k of ['allOf', 'oneOf', 'anyOf'])
    for (const sub of (s[k] as Json[] | undefined) ?? []) textPaths(sub, path, depth + 1, out);
  if (acceptsString(s)) out.push({ path, key: false });
  for (const [name, sub] of Object.entries((s.properties as Json | undefined) ?? {}))
    textPaths(sub as Json, [...path, name], depth + 1, out);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') {
    out.push({ path, key: true });
    textPaths(s.additionalProperties as Json, [...path, 'some_key'], depth + 1, out);
  }
  if (s.items) textPaths(s.items as Json, [...path, 0], depth + 1, out);
  if (s.prefixItems)
    (s.prefixItems as Json[]).forEach((sub, i) => textPaths(sub, [...path, i], depth + 1, out));
}

/** A body that holds `leaf` at `path` (everything else omitted: the check runs before validation). */
function bodyAt(path: Seg[], leaf: unknown): unknown {
  return path.reduceRight<unknown>((inner, s) => {
    if (typeof s === 'number') return [...Array(s).fill('ok'), inner];
    return { [s]: inner };
  }, leaf);
}

/** How the query parser names `a[b]` / `a[]`: `a.b` / `a[0]`. */
function queryField(name: string): string {
  const m = /^([^[\]]+)((?:\[[^\]]*\])*)$/.exec(name);
  if (!m) return name;
  const segs: Seg[] = [m[1]!];
  for (const b of m[2]!.match(/\[[^\]]*\]/g) ?? []) segs.push(b === '[]' ? 0 : b.slice(1, -1));
  return render(segs);
}

const SAMPLE_ID = 'x';
const fill = (template: string, except?: string, value?: string) =>
  template.replace(/\{([^}]+)\}/g, (_, p: string) => (p === except ? value! : SAMPLE_ID));

function buildCases(): Case[] {
  const cases: Case[] = [];
  for (const [template, item] of Object.entries(doc.paths as Json)) {
    const shared = ((item as Json).parameters as Json[] | undefined) ?? [];
    for (const method of METHODS) {
      const op = (item as Json)[method] as Json | undefined;
      if (!op) continue;
      const M = method.toUpperCase();
      const label = `${M} ${template}`;
      const params = [...shared, ...((op.parameters as Json[] | undefined) ?? [])].map((p) => resolve(p)!);
      for (const p of params) {
        const name = String(p.name);
        if (p.in === 'path') {
          for (const [raw, reason] of [
            ['a%00b', 'nul_character'],
            ['a%ED%A0%80b', 'invalid_utf8'],
          ] as const)
            cases.push({
              name: `${label} path ${name} (${reason})`,
              method: M,
              url: fill(template, name, raw),
              field: name,
              location: 'path',
              reason,
            });
        } else if (p.in === 'query') {
          cases.push({
            name: `${label} query ${name}`,
            method: M,
            url: `${fill(template)}?${encodeURIComponent(name).replace(/%5B/g, '[').replace(/%5D/g, ']')}=a%00`,
            field: queryField(name),
            location: 'query',
            reason: 'nul_character',
          });
        } else if (p.in === 'header') {
          cases.push({
            name: `${label} header ${name}`,
            method: M,
            url: fill(template),
            header: { name, value: Buffer.from('1\u00002', 'latin1') },
            field: name.toLowerCase(),
            location: 'header',
            reason: 'nul_character',
          });
        }
      }
      const content = (resolve(op.requestBody as Json | undefined)?.content as Json | undefined) ?? {};
      const json = content['application/json']?.schema as Json | undefined;
      if (json) {
        const found: Array<{ path: Seg[]; key: boolean }> = [];
        textPaths(json, [], 0, found);
        const seen = new Set<string>();
        for (const { path, key } of found) {
          for (const [text, reason] of [
            ['a\u0000b', 'nul_character'],
            ['a\ud800b', 'lone_surrogate'],
          ] as const) {
            const field = key ? render([...path, `k${text}`]) : render(path);
            if (seen.has(`${field} ${reason}`)) continue;
            seen.add(`${field} ${reason}`);
            cases.push({
              name: `${label} body ${field} (${reason})`,
              method: M,
              url: fill(template),
              body: key ? bodyAt(path, { [`k${text}`]: 'v' }) : bodyAt(path, text),
              field,
              location: 'body',
              reason,
            });
          }
        }
      }
      const form = resolve(content['multipart/form-data']?.schema as Json | undefined);
      for (const [name, sub] of Object.entries((form?.properties as Json | undefined) ?? {})) {
        const s = resolve(sub as Json)!;
        const part = s.items ? resolve(s.items as Json)! : s;
        const binary = part.format === 'binary' || typeof part.contentMediaType === 'string';
        cases.push({
          name: `${label} form ${name}${binary ? ' filename' : ''}`,
          method: M,
          url: fill(template),
          // RFC 7578 §4.2 / RFC 5987: the only way a NUL reaches a filename (busboy refuses a raw one).
          form: binary
            ? { name, filename: "UTF-8''top%2Fa%00b.txt", value: Buffer.from('bytes') }
            : { name, value: Buffer.from('a\u0000b', 'utf8') },
          field: binary ? `${name}.filename` : name,
          location: 'form',
          reason: 'nul_character',
        });
      }
    }
  }
  return cases;
}

/** One request over a raw socket (fetch refuses a NUL in a header, and re-encodes some bytes). */
function rawRequest(
  base: string,
  c: Case,
  credential: string,
): Promise<{ status: number; contentType: string; body: string }> {
  const { hostname, port } = new URL(base);
  const head: Buffer[] = [Buffer.from(`${c.method} ${c.url} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n`)];
  head.push(Buffer.from(`Authorization: Bearer ${credential}\r\nConnection: close\r\n`));
  let payload = Buffer.alloc(0);
  if (c.header) head.push(Buffer.from(`${c.header.name}: `), c.header.value, Buffer.from('\r\n'));
  if (c.body !== undefined) {
    payload = Buffer.from(JSON.stringify(c.body), 'utf8');
    head.push(Buffer.from('Content-Type: application/json\r\n'));
  } else if (c.form) {
    const boundary = 'mangoboundary42';
    const disposition = c.form.filename
      ? `form-data; name="${c.form.name}"; filename*=${c.form.filename}`
      : `form-data; name="${c.form.name}"`;
    payload = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n`, 'utf8'),
      Buffer.from(c.form.filename ? 'Content-Type: text/plain\r\n\r\n' : '\r\n'),
      c.form.value,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    head.push(Buffer.from(`Content-Type: multipart/form-data; boundary=${boundary}\r\n`));
  }
  if (c.method !== 'GET' || payload.length > 0)
    head.push(Buffer.from(`Content-Length: ${payload.length}\r\n`));
  head.push(Buffer.from('\r\n'));
  return new Promise((resolvePromise, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [headers = '', ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0);
      const contentType = /\r\ncontent-type: *([^\r]*)/i.exec(headers)?.[1] ?? '';
      let body = rest.join('\r\n\r\n');
      if (/\r\ntransfer-encoding: *chunked/i.test(headers)) body = unchunk(body);
      resolvePromise({ status, contentType, body });
    });
    // Not end(): a half-closed request is aborted by the server before it answers.
    socket.write(Buffer.concat([...head, payload]));
  });
}

function unchunk(s: string): string {
  let out = '';
  let rest = s;
  for (;;) {
    const nl = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, nl), 16);
    if (!size) return out;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 2 + size + 2);
  }
}

describe('text PostgreSQL cannot store, in any field of any route (table from openapi.yaml)', () => {
  let api: ApiUnderTest;
  let files: AppProcess;
  let ingress: Awaited<ReturnType<typeof startIngress>>;
  let key: string;
  let http: HttpClient;
  const s3 = freshBucketEnv('storable');
  let snapshotSql: string;
  let filesUrl: string;
  /** Real ids where a handler looks its resource up before it reads a multipart form. */
  const realIds: Record<string, string> = {};

  /** A digest of every row of every table: equal before and after means nothing was stored. */
  const snapshot = async () =>
    (await api.sql<{ t: string; h: string }>(snapshotSql)).map((r) => `${r.t}=${r.h}`).join(' ');

  beforeAll(async () => {
    api = await startApi('storable', s3);
    const started = await startFilesApp(api.db.url, s3);
    files = started.app;
    filesUrl = started.url;
    ingress = await startIngress({ apiUrl: api.url, filesUrl });
    key = (await api.issueKey('wrkspc_default')).api_key;
    http = httpClient(ingress.url, key);
    const form = new FormData();
    form.append(
      'files[]',
      new Blob(['---\nname: nul-table\ndescription: A Skill.\n---\n']),
      'nul-table/SKILL.md',
    );
    const skill = await fetch(`${ingress.url}/v1/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    if (skill.status !== 201)
      throw new Error(`could not create a Skill: ${skill.status} ${await skill.text()}`);
    realIds.skill_id = ((await skill.json()) as { id: string }).id;
    const tables = await api.sql<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`,
    );
    // The audit log records refused writes by design (their rows say `failed`: asserted below); every
    // other table must be unchanged.
    snapshotSql = tables
      .filter(({ name }) => name !== 'audit_log')
      .map(
        ({ name }) =>
          `SELECT '${name}' AS t, md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) AS h FROM "${name}" x`,
      )
      .join(' UNION ALL ');
  }, 120_000);
  afterAll(async () => {
    await ingress?.close();
    await files?.stop();
    await api?.close();
    await dropBucket(s3);
  });

  const cases = buildCases();

  it('covers every operation of openapi.yaml and every kind of field', () => {
    const operations = new Set(cases.map((c) => c.name.split(' ').slice(0, 2).join(' ')));
    const withInput = Object.entries(doc.paths as Json).flatMap(([t, item]) =>
      METHODS.filter((m) => {
        const op = (item as Json)[m] as Json | undefined;
        return op && ((item as Json).parameters?.length || op.parameters?.length || op.requestBody);
      }).map((m) => `${m.toUpperCase()} ${t}`),
    );
    expect([...operations].sort()).toEqual(withInput.sort());
    for (const location of ['body', 'query', 'path', 'header', 'form'] as const)
      expect(cases.filter((c) => c.location === location).length).toBeGreaterThan(0);
    // The fields the issue names are among them.
    const names = cases.map((c) => c.name);
    expect(names).toContain('POST /v1/agents body name (nul_character)');
    expect(names).toContain('POST /v1/sessions body title (nul_character)');
    expect(names).toContain('POST /v1/sessions body metadata.some_key (lone_surrogate)');
    expect(names).toContain(
      'POST /v1/sessions/{session_id}/events body events[0].content[0].text (nul_character)',
    );
    expect(names).toContain('POST /v1/files form file filename');
    expect(names).toContain('GET /v1/sessions/{session_id}/events/stream header Last-Event-ID');
  });

  it(`answers 400 invalid_request_error naming the field, and stores nothing (${cases.length} cases)`, async () => {
    const before = await snapshot();
    const [{ since }] = await api.sql<{ since: Date }>('SELECT now() AS since');
    const failures: string[] = [];
    for (const c of cases) {
      // Node's HTTP parser refuses a NUL in a header before any code runs; in a deployment the ingress
      // (nginx) answers that itself, so header cases go straight to the app that serves the route.
      const base = !c.header ? ingress.url : FILES_ROUTES.test(`${c.method} ${c.url}`) ? filesUrl : api.url;
      const url = c.form
        ? c.url.replace(/\/x(?=\/|$)/, (m) => (realIds.skill_id ? `/${realIds.skill_id}` : m))
        : c.url;
      const res = await rawRequest(base, { ...c, url }, key);
      let body: Json | undefined;
      try {
        body = JSON.parse(res.body) as Json;
      } catch {
        body = undefined;
      }
      const ok =
        res.status === 400 &&
        /^application\/json/.test(res.contentType) &&
        body?.type === 'error' &&
        body.error?.type === 'invalid_request_error' &&
        body.error?.details?.field === c.field &&
        body.error?.details?.location === c.location &&
        body.error?.details?.reason === c.reason &&
        typeof body.request_id === 'string';
      if (!ok) failures.push(`${c.name}: ${res.status} ${res.body.slice(0, 300)} (wanted field ${c.field})`);
    }
    expect(failures).toEqual([]);
    expect(await snapshot()).toBe(before);
    expect(
      await api.sql(
        "SELECT operation, status_code FROM audit_log WHERE created_at >= $1 AND outcome <> 'failed'",
        [since],
      ),
    ).toEqual([]);
  }, 300_000);

  it('the fields the issue measured: the same request without the bad character is stored', async () => {
    const agent = await http.post('/v1/agents', { name: 'a\u0000', model: 'claude-sonnet-4-6' });
    expect(agent.status).toBe(400);
    expect(agent.body.error).toMatchObject({ type: 'invalid_request_error', details: { field: 'name' } });
    const agentId = (await http.post('/v1/agents', { name: 'a', model: 'claude-sonnet-4-6' })).body.id;
    const envId = (await http.post('/v1/environments', { name: 'storable' })).body.id;
    const before = await snapshot();
    const bad = [
      { title: 't\u0000' },
      { title: 't\ud800' },
      { metadata: { k: 'v\u0000' } },
      { metadata: { 'k\udfff': 'v' } },
      { initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi\u0000' }] }] },
    ];
    const fields = [
      'title',
      'title',
      'metadata.k',
      'metadata["k\\udfff"]',
      'initial_events[0].content[0].text',
    ];
    for (const [i, extra] of bad.entries()) {
      const res = await http.post('/v1/sessions', { agent: agentId, environment_id: envId, ...extra });
      expect([res.status, res.body.error.details.field]).toEqual([400, fields[i]]);
    }
    expect(await snapshot()).toBe(before);
    const session = await http.post('/v1/sessions', { agent: agentId, environment_id: envId, title: 't' });
    expect(session.status).toBe(201);
    const msg = (text: string) => ({ events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
    const sent = await http.post(`/v1/sessions/${session.body.id}/events`, msg('hi\u0000'));
    expect(sent.status).toBe(400);
    expect(sent.body.error.details).toEqual({
      field: 'events[0].content[0].text',
      location: 'body',
      reason: 'nul_character',
    });
    const stored = await api.sql('SELECT count(*)::int AS n FROM session_events WHERE session_id = $1', [
      session.body.id,
    ]);
    expect((await http.post(`/v1/sessions/${session.body.id}/events`, msg('hi'))).status).toBe(200);
    const after = await api.sql('SELECT count(*)::int AS n FROM session_events WHERE session_id = $1', [
      session.body.id,
    ]);
    expect(after[0].n).toBe(stored[0].n + 1);
  }, 60_000);
});
