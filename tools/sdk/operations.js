// tools/sdk/operations.js — reads openapi.yaml into the operation model that the resource generators of all
// three SDKs share (tools/sdk/generate-resources.js). Grouping comes from the contract alone: an operationId
// `environments.work.poll` is method `poll` of resource `environments` → `work`. What each method does is
// derived from the operation too:
//   body      'json' | 'multipart' | null      (requestBody content type)
//   result    'json' | 'none' | 'binary' | 'sse'  (2xx response content type; 204 → none)
//   list      a `page` query parameter and a 2xx object with `data` (array) and `next_page` → auto-paging
//   accept    non-2xx statuses whose documented body is a normal result (readiness 503)
// A new operation in openapi.yaml therefore appears in every SDK after `tools/sdk/generate.sh`.
'use strict';
const YAML = require('yaml');

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function loadOperations(text) {
  const doc = YAML.parse(text);
  const resolve = (node) => {
    let n = node;
    const seen = new Set();
    while (n && typeof n === 'object' && typeof n.$ref === 'string') {
      if (seen.has(n.$ref)) throw new Error(`circular $ref ${n.$ref}`);
      seen.add(n.$ref);
      const parts = n.$ref.replace(/^#\//, '').split('/');
      n = parts.reduce((o, k) => (o == null ? undefined : o[k.replace(/~1/g, '/').replace(/~0/g, '~')]), doc);
    }
    return n;
  };
  const refName = (schema) =>
    schema && typeof schema.$ref === 'string' && schema.$ref.startsWith('#/components/schemas/')
      ? schema.$ref.slice('#/components/schemas/'.length)
      : undefined;

  const isErrorEnvelope = (schema) => {
    const s = resolve(schema);
    if (!s || typeof s !== 'object') return false;
    if ((s.allOf ?? []).some(isErrorEnvelope)) return true;
    return !!(s.properties?.error && s.properties?.type);
  };

  const ops = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const shared = item.parameters ?? [];
    for (const method of METHODS) {
      const op = item[method];
      if (!op || !op.operationId) continue;
      const id = op.operationId;
      const parts = id.split('.');
      if (parts.length < 2 || parts.some((p) => !/^[a-z][a-z0-9_]*$/.test(p))) {
        throw new Error(`operationId ${id} must be dotted snake_case (resource[.sub].method)`);
      }
      const params = [...shared, ...(op.parameters ?? [])].map(resolve);
      const pathParams = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const query = params
        .filter((p) => p.in === 'query')
        .map((p) => ({
          name: p.name,
          required: !!p.required,
          schema: resolve(p.schema) ?? {},
          description: p.description,
        }));
      // Idempotency-Key is sent by each SDK's own transport on every POST, never a method's parameter.
      const headers = params
        .filter((p) => p.in === 'header' && p.name !== 'Idempotency-Key')
        .map((p) => p.name);

      let body = null;
      let bodySchema;
      let bodyRequired = false;
      const rb = resolve(op.requestBody);
      if (rb && rb.content) {
        bodyRequired = !!rb.required;
        if (rb.content['application/json']) {
          body = 'json';
          bodySchema = rb.content['application/json'].schema;
        } else if (rb.content['multipart/form-data']) {
          body = 'multipart';
          bodySchema = rb.content['multipart/form-data'].schema;
        } else {
          throw new Error(`${id}: unsupported request content ${Object.keys(rb.content)}`);
        }
      }
      const multipart = [];
      if (body === 'multipart') {
        const s = resolve(bodySchema) ?? {};
        const req = new Set(s.required ?? []);
        for (const [name, prop] of Object.entries(s.properties ?? {})) {
          const p = resolve(prop) ?? {};
          // OpenAPI 3.1 marks a file part with contentMediaType (3.0: format: binary).
          const binary = (x) => !!x && (x.format === 'binary' || typeof x.contentMediaType === 'string');
          const isFile = binary(p) || (p.type === 'array' && binary(resolve(p.items)));
          multipart.push({ name, file: isFile, array: p.type === 'array', required: req.has(name) });
        }
      }

      const responses = Object.entries(op.responses ?? {}).map(([code, r]) => [code, resolve(r)]);
      const ok = responses.filter(([code]) => /^2\d\d$/.test(code));
      if (ok.length === 0) throw new Error(`${id}: no 2xx response`);
      const [okStatus, okResponse] = ok[0];
      const content = okResponse.content ?? {};
      const types = Object.keys(content);
      let result;
      let resultSchema;
      if (okStatus === '204' || types.length === 0) result = 'none';
      else if (types.includes('application/json')) {
        result = 'json';
        resultSchema = content['application/json'].schema;
      } else if (types.includes('text/event-stream')) result = 'sse';
      else result = 'binary';

      let list = null;
      if (result === 'json' && query.some((q) => q.name === 'page')) {
        const s = resolve(resultSchema);
        const data = s?.properties?.data;
        if (data && s.properties.next_page && resolve(data).type === 'array') {
          list = { item: refName(resolve(data).items), pageRef: refName(resultSchema) };
        }
      }
      const accept = responses
        .filter(([code, r]) => /^[45]\d\d$/.test(code) && r?.content?.['application/json'])
        // An error envelope is an error; a documented non-error body (readiness 503) is a result.
        .filter(([, r]) => !isErrorEnvelope(r.content['application/json'].schema))
        .map(([code]) => Number(code));

      ops.push({
        id,
        resource: parts.slice(0, -1),
        name: parts[parts.length - 1],
        method: method.toUpperCase(),
        path,
        pathParams,
        query,
        headers,
        body,
        bodyRequired,
        bodyRef: refName(bodySchema),
        multipart,
        result,
        resultRef: result === 'json' ? refName(resultSchema) : undefined,
        okStatus: Number(okStatus),
        list,
        accept,
        summary: (op.summary ?? '').trim(),
        deprecated: !!op.deprecated,
      });
    }
  }
  ops.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { doc, ops, tree: buildTree(ops) };
}

/** Resource tree: { name, path: [...], ops: [...], children: Map<name, node> } (sorted, deterministic). */
function buildTree(ops) {
  const root = { name: '', path: [], ops: [], children: new Map() };
  for (const op of ops) {
    let node = root;
    for (const part of op.resource) {
      if (!node.children.has(part)) {
        node.children.set(part, { name: part, path: [...node.path, part], ops: [], children: new Map() });
      }
      node = node.children.get(part);
    }
    if (node.children.has(op.name)) throw new Error(`${op.id}: method name collides with a sub-resource`);
    node.ops.push(op);
  }
  const visit = (node) => {
    node.children = new Map([...node.children.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
    for (const child of node.children.values()) visit(child);
    for (const op of node.ops) {
      if (node.children.has(op.name)) throw new Error(`${op.id}: method name collides with a sub-resource`);
    }
  };
  visit(root);
  return root;
}

const camel = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
const pascal = (s) => {
  const c = camel(s);
  return c.charAt(0).toUpperCase() + c.slice(1);
};

module.exports = { loadOperations, camel, pascal };
