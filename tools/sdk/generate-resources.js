#!/usr/bin/env node
// tools/sdk/generate-resources.js — writes the resource layer of the three SDKs from openapi.yaml
// (tools/sdk/operations.js reads the contract). Called by tools/sdk/generate.sh; do not edit its output.
//   node generate-resources.js <openapi.yaml> <typescript|python|go> <output file> [python models.py]
// Every operation becomes a method of the resource its operationId names, in every SDK:
//   TypeScript  client.environments.work.poll(environmentId, params)      (src/generated/resources.ts)
//   Python      client.environments.work.poll(environment_id, block_ms=…)  (_generated/resources.py, sync+async)
//   Go          c.Environments.Work.Poll(ctx, environmentID, params)      (mango/resources.gen.go)
'use strict';
const fs = require('node:fs');
const { loadOperations, camel, pascal } = require('./operations');

const [, , input, lang, output, pyModels] = process.argv;
if (!input || !lang || !output) {
  console.error('usage: generate-resources.js <openapi.yaml> <typescript|python|go> <out> [models.py]');
  process.exit(2);
}
function walk(node, fn) {
  for (const child of node.children.values()) walk(child, fn);
  if (node.path.length) fn(node);
}
const doc = (op) => `${op.method} ${op.path}${op.summary ? ` — ${op.summary}` : ''}`;

// TypeScript -----------------------------------------------------------------------------------------
function emitTypeScript({ tree }) {
  const cls = (node) => `${node.path.map(pascal).join('')}Resource`;
  const out = [
    '// Generated from openapi.yaml by tools/sdk/generate-resources.js (tools/sdk/generate.sh). Do not edit.',
    '/* eslint-disable */',
    "import type { HttpClient, RequestOptions } from '../core';",
    "import type { PagePromise } from '../pagination';",
    "import type { SessionStreamEvent } from '../types';",
    'import {',
    '  GeneratedResource,',
    '  callDownload,',
    '  callJson,',
    '  callList,',
    '  callStream,',
    '  callUpload,',
    '  seg,',
    '  type Body,',
    '  type Item,',
    '  type Query,',
    '  type Result,',
    '  type ResultAt,',
    '  type StreamParams,',
    '  type Uploadable,',
    "} from '../resource';",
    '',
  ];
  const classes = [];
  walk(tree, (node) => classes.push(node));
  classes.push(tree);
  for (const node of classes) {
    const name = node.path.length ? cls(node) : 'GeneratedResources';
    out.push(
      node.path.length
        ? `/** \`client.${node.path.map(camel).join('.')}\` */`
        : '/** Every resource of openapi.yaml (the root of `MangoClient`). */',
    );
    out.push(`export class ${name} extends GeneratedResource {`);
    for (const [key, child] of node.children) out.push(`  readonly ${camel(key)}: ${cls(child)};`);
    if (node.children.size) {
      out.push('', '  constructor(http: HttpClient) {', '    super(http);');
      for (const [key, child] of node.children) out.push(`    this.${camel(key)} = new ${cls(child)}(http);`);
      out.push('  }');
    }
    for (const op of node.ops) out.push('', ...tsMethod(op).map((l) => `  ${l}`));
    out.push('}', '');
  }
  return out.join('\n');
}

function tsMethod(op) {
  const id = `'${op.id}'`;
  const args = op.pathParams.map((p) => `${camel(p)}: string`);
  const path = '`' + op.path.replace(/\{([^}]+)\}/g, (_, p) => '${seg(' + camel(p) + ')}') + '`';
  const hasQuery = op.query.length > 0;
  const queryRequired = op.query.some((q) => q.required);
  let body = 'undefined';
  if (op.body === 'json') {
    args.push(`body${op.bodyRequired ? '' : '?'}: Body<${id}>`);
    body = 'body';
  } else if (op.body === 'multipart') {
    const fields = op.multipart.map(
      (f) =>
        `'${f.name}'${f.required ? '' : '?'}: ${f.file ? (f.array ? 'Uploadable[]' : 'Uploadable') : 'string'}`,
    );
    args.push(`body: { ${fields.join('; ')} }`);
    body = 'body';
  }
  let query = 'undefined';
  if (op.result === 'sse') {
    args.push(`params: StreamParams${hasQuery ? ` & Query<${id}>` : ''} = {}`);
    query = 'params';
  } else if (hasQuery) {
    const q = op.body ? 'query' : 'params';
    args.push(`${q}${queryRequired ? '' : '?'}: Query<${id}>`);
    query = q;
  }
  args.push('options?: RequestOptions');
  const accept = op.accept.length ? `, accept: [${op.accept.join(', ')}]` : '';
  const spec = `{ method: '${op.method}', path: ${path}, query: ${query}, body: ${body}, options${accept} }`;
  let ret;
  let call;
  if (op.result === 'sse') {
    ret = 'AsyncIterable<SessionStreamEvent>';
    call = `return callStream(this._http, ${path}, params, options);`;
  } else if (op.result === 'binary') {
    ret = 'Promise<Response>';
    call = `return callDownload(this._http, ${spec});`;
  } else if (op.body === 'multipart') {
    ret = `Promise<Result<${id}>>`;
    call = `return callUpload<Result<${id}>>(this._http, ${spec});`;
  } else if (op.list) {
    ret = `PagePromise<Item<${id}>, Result<${id}>>`;
    call = `return callList<Item<${id}>, Result<${id}>>(this._http, ${spec});`;
  } else if (op.result === 'none') {
    ret = 'Promise<void>';
    call = `return callJson<void>(this._http, ${spec});`;
  } else {
    const extra = op.accept.map((c) => ` | ResultAt<${id}, ${c}>`).join('');
    ret = `Promise<Result<${id}>${extra}>`;
    call = `return callJson<Result<${id}>${extra}>(this._http, ${spec});`;
  }
  return [`/** \`${doc(op)}\` */`, `${camel(op.name)}(${args.join(', ')}): ${ret} {`, `  ${call}`, '}'];
}

// Python ---------------------------------------------------------------------------------------------
const PY_KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
);
const pyIdent = (name) => {
  const id = name.replace(/\[\]$/, '').replace(/[^A-Za-z0-9_]/g, '_');
  return PY_KEYWORDS.has(id) ? `${id}_` : id;
};
function pyScalar(schema) {
  const t = Array.isArray(schema.type) ? schema.type.filter((x) => x !== 'null') : [schema.type];
  if (t.length !== 1) return 'Any';
  return { integer: 'int', number: 'float', boolean: 'bool', string: 'str' }[t[0]] ?? 'Any';
}
/** Query parameters as Python keyword arguments: `created_at[gte]` groups into `created_at` (a mapping),
 * `types[]` becomes `types` (a sequence) — the shapes encode_query writes back. */
function pyQuery(op) {
  const args = new Map();
  for (const q of op.query) {
    const bracket = /^([A-Za-z0-9_]+)\[([A-Za-z0-9_]+)\]$/.exec(q.name);
    if (bracket) {
      const id = pyIdent(bracket[1]);
      if (!args.has(id)) args.set(id, { id, key: bracket[1], type: 'Mapping[str, Any]', required: false });
      continue;
    }
    const id = pyIdent(q.name);
    const isList = q.name.endsWith('[]') || q.schema.type === 'array';
    const key = q.name.endsWith('[]') ? q.name.slice(0, -2) : q.name;
    const type = isList ? `Sequence[${pyScalar(q.schema.items ?? {})}]` : pyScalar(q.schema);
    args.set(id, { id, key, type, required: q.required });
  }
  return [...args.values()];
}

function emitPython({ tree }, modelsPath) {
  const names = new Set();
  const text = modelsPath ? fs.readFileSync(modelsPath, 'utf8') : '';
  for (const m of text.matchAll(/^class (\w+)\b|^(\w+): TypeAlias\b|^(\w+) = /gm))
    names.add(m[1] ?? m[2] ?? m[3]);
  const model = (ref) => (ref && names.has(ref) ? `m.${ref}` : 'dict[str, Any]');
  const cls = (node, prefix) => `${prefix}${node.path.map(pascal).join('')}`;
  const out = [
    '"""Generated from openapi.yaml by tools/sdk/generate-resources.js (tools/sdk/generate.sh). Do not edit.',
    '',
    'Every operation is a method of the resource its operationId names, e.g. ``environments.work.poll``."""',
    '',
    'from __future__ import annotations',
    '',
    'from collections.abc import AsyncIterator, Iterator, Mapping, Sequence',
    'from typing import Any, cast',
    '',
    'from .._base import AsyncBinaryResponse, AsyncResource, BinaryResponse, StreamEvent, SyncResource, seg',
    'from .._core import AsyncHttpClient, FileInput, HttpClient, Query',
    'from ..pagination import AsyncPaginator, Paginator',
    'from . import models as m',
    '',
    '__all__ = ["AsyncResources", "Resources"]',
    '',
  ];
  const nodes = [];
  walk(tree, (n) => nodes.push(n));
  nodes.push(tree);
  for (const flavour of ['sync', 'async']) {
    const prefix = flavour === 'sync' ? '' : 'Async';
    for (const node of nodes) {
      const name = node.path.length ? cls(node, prefix) : `${prefix}Resources`;
      const base = flavour === 'sync' ? 'SyncResource' : 'AsyncResource';
      const httpType = flavour === 'sync' ? 'HttpClient' : 'AsyncHttpClient';
      out.push('', `class ${name}(${base}):`);
      out.push(
        node.path.length
          ? `    """\`\`client.${node.path.join('.')}\`\`"""`
          : '    """Every resource of openapi.yaml (the root of the client)."""',
      );
      if (node.children.size) {
        out.push('', `    def __init__(self, http: ${httpType}) -> None:`, '        super().__init__(http)');
        for (const [key, child] of node.children)
          out.push(`        self.${pyIdent(key)} = ${cls(child, prefix)}(http)`);
      }
      for (const op of node.ops) out.push('', ...pyMethod(op, flavour, model).map((l) => `    ${l}`));
      if (!node.children.size && !node.ops.length) out.push('    pass');
    }
    out.push('');
  }
  return out.join('\n') + '\n';
}

function pyMethod(op, flavour, model) {
  const isAsync = flavour === 'async';
  const pos = ['self', ...op.pathParams.map((p) => `${pyIdent(p)}: str`)];
  const kw = [];
  let body = 'None';
  let parts = 'None';
  if (op.body === 'json') {
    const t = op.bodyRef ? model(op.bodyRef) : 'Mapping[str, Any]';
    pos.push(op.bodyRequired ? `params: ${t}` : `params: ${t} | None = None`);
    body = op.bodyRequired ? 'params' : 'params if params is not None else {}';
  } else if (op.body === 'multipart') {
    const items = [];
    for (const f of op.multipart) {
      const id = pyIdent(f.name);
      const t = f.file ? (f.array ? 'Sequence[FileInput]' : 'FileInput') : 'str';
      kw.push(f.required ? `${id}: ${t}` : `${id}: ${t} | None = None`);
      items.push(`("${f.name}", ${id}, ${f.file ? 'True' : 'False'})`);
    }
    parts = `[${items.join(', ')}]`;
  }
  // An event stream's resume point is the Last-Event-ID header (last_event_id below), not the query copy.
  const query = pyQuery(op).filter((q) => !(op.result === 'sse' && q.key === 'last_event_id'));
  for (const q of query) kw.push(q.required ? `${q.id}: ${q.type}` : `${q.id}: ${q.type} | None = None`);
  const queryDict = `{${query.map((q) => `"${q.key}": ${q.id}`).join(', ')}}`;
  if (op.result === 'sse') kw.push('last_event_id: str | None = None', 'max_retries: int | None = None');
  kw.push('extra_query: Query | None = None', 'timeout: float | None = None');
  // Required keyword-only arguments first (Python allows any order after `*`, but keep it readable).
  kw.sort((a, b) => (a.includes('=') ? 1 : 0) - (b.includes('=') ? 1 : 0));
  const sig = [...pos, '*', ...kw].join(', ');
  const path = 'f"' + op.path.replace(/\{([^}]+)\}/g, (_, p) => `{seg(${pyIdent(p)})}`) + '"';
  const common = `query=${queryDict}, extra_query=extra_query, timeout=timeout`;
  const doc = `"""\`\`${op.method} ${op.path}\`\`${op.summary ? `: ${op.summary.replace(/"/g, "'")}` : ''}"""`;
  const d = isAsync ? 'async def' : 'def';
  if (op.result === 'sse') {
    const ret = isAsync ? 'AsyncIterator[StreamEvent]' : 'Iterator[StreamEvent]';
    return [
      `def ${pyIdent(op.name)}(${sig}) -> ${ret}:`,
      `    ${doc}`,
      `    return self._stream(${path}, ${common}, last_event_id=last_event_id, max_retries=max_retries)`,
    ];
  }
  if (op.result === 'binary') {
    const ret = isAsync ? 'AsyncBinaryResponse' : 'BinaryResponse';
    const aw = isAsync ? 'await ' : '';
    return [
      `${d} ${pyIdent(op.name)}(${sig}) -> ${ret}:`,
      `    ${doc}`,
      `    return ${aw}self._download("${op.method}", ${path}, ${common})`,
    ];
  }
  if (op.list) {
    const item = model(op.list.item);
    const ret = `${isAsync ? 'AsyncPaginator' : 'Paginator'}[${item}]`;
    return [
      `def ${pyIdent(op.name)}(${sig}) -> ${ret}:`,
      `    ${doc}`,
      `    return self._list("${op.method}", ${path}, ${common})`,
    ];
  }
  const accept = op.accept.length ? `, accept=(${op.accept.join(', ')},)` : '';
  const call = `self._request("${op.method}", ${path}, ${common}, body=${body}, parts=${parts}${accept})`;
  const aw = isAsync ? 'await ' : '';
  if (op.result === 'none')
    return [`${d} ${pyIdent(op.name)}(${sig}) -> None:`, `    ${doc}`, `    ${aw}${call}`];
  const ret = op.accept.length ? 'dict[str, Any]' : model(op.resultRef);
  return [
    `${d} ${pyIdent(op.name)}(${sig}) -> ${ret}:`,
    `    ${doc}`,
    `    return cast(${JSON.stringify(ret)}, ${aw}${call})`,
  ];
}

// Go -------------------------------------------------------------------------------------------------
// Names follow oapi-codegen: operation `memory_stores.memories.list` is method MemoryStoresMemoriesList with
// MemoryStoresMemoriesListParams; an inline result is <Op>Result (hoisted by normalize-openapi.js).
const goOp = (op) => op.id.split('.').map(pascal).join('');
const goIdent = (name) => {
  const id = camel(name.replace(/[^A-Za-z0-9_]/g, '_')).replace(/Id$/, 'ID');
  return ['type', 'func', 'range', 'map', 'chan', 'default', 'select', 'go', 'var'].includes(id)
    ? `${id}_`
    : id;
};
const goType = (ref) => `generated.${ref.charAt(0).toUpperCase()}${ref.slice(1)}`;
// The Go SDK's module path, read from its go.mod (one place: docs/versioning.md, "Go module path").
const goModulePath = () => {
  const mod = fs.readFileSync(require('node:path').join(__dirname, '../../libs/sdk/go/go.mod'), 'utf8');
  const m = /^module\s+(\S+)\s*$/m.exec(mod);
  if (!m) throw new Error('libs/sdk/go/go.mod names no module');
  return m[1];
};

function emitGo({ tree }) {
  const cls = (node) => `${node.path.map(pascal).join('')}Resource`;
  const out = [
    '// Code generated by tools/sdk/generate-resources.js from openapi.yaml (tools/sdk/generate.sh). DO NOT EDIT.',
    '',
    'package mango',
    '',
    'import (',
    '\t"context"',
    '\t"encoding/json"',
    '\t"iter"',
    '\t"net/http"',
    '\t"net/url"',
    '',
    `\t"${goModulePath()}/generated"`,
    ')',
    '',
    'var (',
    '\t_ = json.RawMessage(nil)',
    '\t_ = url.PathEscape',
    '\t_ http.Header',
    '\t_ iter.Seq[int]',
    ')',
    '',
    '// Resources is every resource of openapi.yaml, grouped by operationId (c.Environments.Work.Poll).',
    'type Resources struct {',
  ];
  for (const [key, child] of tree.children) out.push(`\t${pascal(key)} *${cls(child)}`);
  out.push('}', '', 'func newResources(c *Client) Resources {', '\treturn Resources{');
  for (const [key, child] of tree.children) out.push(`\t\t${pascal(key)}: new${cls(child)}(c),`);
  out.push('\t}', '}');
  walk(tree, (node) => {
    out.push(
      '',
      `// ${cls(node)} is c.${node.path.map(pascal).join('.')}.`,
      `type ${cls(node)} struct {`,
      '\tc *Client',
    );
    for (const [key, child] of node.children) out.push(`\t${pascal(key)} *${cls(child)}`);
    out.push(
      '}',
      '',
      `func new${cls(node)}(c *Client) *${cls(node)} {`,
      `\treturn &${cls(node)}{c: c${[...node.children].map(([k, ch]) => `, ${pascal(k)}: new${cls(ch)}(c)`).join('')}}`,
      '}',
    );
    for (const op of node.ops) out.push('', ...goMethod(op, cls(node)));
  });
  return out.join('\n') + '\n';
}

function goMethod(op, recv) {
  const name = pascal(op.name);
  const raw = goOp(op);
  const pathArgs = op.pathParams.map((p) => `${goIdent(p)} string`);
  const pathVals = op.pathParams.map(goIdent);
  const hasParams = op.query.length > 0 || op.headers.length > 0;
  const args = ['ctx context.Context', ...pathArgs];
  const callArgs = ['ctx', ...pathVals];
  if (hasParams && op.result !== 'sse') {
    args.push(`params *generated.${raw}Params`);
    callArgs.push('params');
  }
  const summary = `// ${name} is ${op.method} ${op.path}${op.summary ? ` (${op.summary})` : ''}.`;
  const editors = 'reqEditors ...generated.RequestEditorFn';
  if (op.result === 'sse') {
    const path =
      '"' + op.path.replace(/\{([^}]+)\}/g, (_, p) => `" + url.PathEscape(${goIdent(p)}) + "`) + '"';
    return [
      summary,
      '// It reconnects with Last-Event-ID (see StreamOptions) and ends after session.deleted.',
      `func (r *${recv}) ${name}(${[...args, 'opts StreamOptions'].join(', ')}) iter.Seq2[StreamEvent, error] {`,
      `\treturn r.c.streamPath(ctx, ${path.replace(/ \+ ""$/, '')}, opts)`,
      '}',
    ];
  }
  if (op.body === 'multipart') {
    const result = op.resultRef ? goType(op.resultRef) : `generated.${raw}Result`;
    return [
      summary,
      '// The body streams from form (see Multipart); it is not retried once sent.',
      `func (r *${recv}) ${name}(${[...args, 'form *Multipart', editors].join(', ')}) (*${result}, error) {`,
      `\treturn Decode[${result}](r.c.${raw}WithBody(${[...callArgs, 'form.ContentType()', 'form.Reader()', 'reqEditors...'].join(', ')}))`,
      '}',
    ];
  }
  if (op.body === 'json') {
    args.push(`body generated.${raw}JSONRequestBody`);
    callArgs.push('body');
  }
  args.push(editors);
  callArgs.push('reqEditors...');
  if (op.result === 'binary') {
    callArgs[0] = 'streaming(ctx)';
    return [
      summary,
      '// The response body streams (close it); a non-2xx status is an *Error.',
      `func (r *${recv}) ${name}(${args.join(', ')}) (*http.Response, error) {`,
      `\treturn checkStream(r.c.${raw}(${callArgs.join(', ')}))`,
      '}',
    ];
  }
  if (op.result === 'none') {
    return [
      summary,
      `func (r *${recv}) ${name}(${args.join(', ')}) error {`,
      `\treturn Check(r.c.${raw}(${callArgs.join(', ')}))`,
      '}',
    ];
  }
  const result = op.resultRef ? goType(op.resultRef) : `generated.${raw}Result`;
  const lines = [
    summary,
    `func (r *${recv}) ${name}(${args.join(', ')}) (*${result}, error) {`,
    `\treturn Decode[${result}](r.c.${raw}(${callArgs.join(', ')}))`,
    '}',
  ];
  if (op.list) {
    const item = op.list.item ? goType(op.list.item) : 'json.RawMessage';
    const pArgs = args.map((a) => (a.startsWith('params ') ? a : a));
    lines.push(
      '',
      `// ${name}All yields every item of every page of ${name}, following next_page.`,
      `func (r *${recv}) ${name}All(${pArgs.join(', ')}) iter.Seq2[${item}, error] {`,
      `\tvar p generated.${raw}Params`,
      '\tif params != nil {',
      '\t\tp = *params',
      '\t}',
      `\treturn allFrom[${item}](ctx, p.Page, func(ctx context.Context, page *string) (*http.Response, error) {`,
      '\t\tp.Page = page',
      `\t\treturn r.c.${raw}(${callArgs.map((a) => (a === 'params' ? '&p' : a)).join(', ')})`,
      '\t})',
      '}',
    );
  }
  return lines;
}

const model = loadOperations(fs.readFileSync(input, 'utf8'));
const emit = { typescript: emitTypeScript, python: emitPython, go: emitGo }[lang];
if (!emit) {
  console.error(`unknown language ${lang}`);
  process.exit(2);
}
fs.writeFileSync(output, emit(model, pyModels));
