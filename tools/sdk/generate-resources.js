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
function emitPython() {
  throw new Error('python: not yet');
}

// Go -------------------------------------------------------------------------------------------------
function emitGo() {
  throw new Error('go: not yet');
}

const model = loadOperations(fs.readFileSync(input, 'utf8'));
const emit = { typescript: emitTypeScript, python: emitPython, go: emitGo }[lang];
if (!emit) {
  console.error(`unknown language ${lang}`);
  process.exit(2);
}
fs.writeFileSync(output, emit(model));
