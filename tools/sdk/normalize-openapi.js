#!/usr/bin/env node
// Rewrites openapi.yaml (OpenAPI 3.1) into the OpenAPI 3.0 dialect that oapi-codegen (kin-openapi) reads,
// dropping only what Go types cannot express anyway (literal consts, multi-type unions). Only tools/sdk/generate.sh uses it;
// openapi.yaml stays the contract. Usage: node normalize-openapi.js <in.yaml> <out.yaml>
//
//   type: [T, 'null']               -> type: T, nullable: true
//   type: [T1, T2, ...]             -> (no type: any JSON value), nullable when 'null' is listed
//   oneOf/anyOf with {type: 'null'} -> the other members, nullable: true (a single $ref becomes allOf)
//   const: v                        -> the type of v (Go has no literal types; an inline one-value enum would
//                                      only add a named type per property, and collide: Error.type vs ErrorType);
//                                      a named component schema that is a const keeps enum: [v]
//   examples: [...] (schema)        -> example: <first>
//   the Idempotency-Key header      -> dropped from each operation: the hand-written client sends it on every
//                                      POST (mango/idempotency.go), so no method takes it as a parameter
//   an inline 2xx JSON response     -> components.schemas.<OperationId in PascalCase>Result, so that every
//                                      result has a Go type name (mango/resources.gen.go returns it)
const fs = require('node:fs');
const YAML = require('yaml');

const [, , input, output] = process.argv;
if (!input || !output) {
  console.error('usage: normalize-openapi.js <in.yaml> <out.yaml>');
  process.exit(2);
}
const doc = YAML.parse(fs.readFileSync(input, 'utf8'));
doc.openapi = '3.0.3';
if (doc.info?.license) delete doc.info.license.identifier;
if (doc.info) delete doc.info.summary;

const isNullSchema = (s) => s && typeof s === 'object' && s.type === 'null' && Object.keys(s).length === 1;
const jsonType = (v) =>
  typeof v === 'string'
    ? 'string'
    : typeof v === 'boolean'
      ? 'boolean'
      : Number.isInteger(v)
        ? 'integer'
        : 'number';

function schema(s, named = false) {
  if (!s || typeof s !== 'object' || Array.isArray(s)) return s;
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t) => t !== 'null');
    if (types.length !== s.type.length) s.nullable = true;
    if (types.length === 1) s.type = types[0];
    else delete s.type;
  }
  if ('const' in s) {
    if (named) s.enum = [s.const];
    if (!s.type && s.const !== null) s.type = jsonType(s.const);
    delete s.const;
  }
  if (Array.isArray(s.examples)) {
    if (s.examples.length > 0 && !('example' in s)) s.example = s.examples[0];
    delete s.examples;
  }
  for (const key of ['oneOf', 'anyOf']) {
    if (!Array.isArray(s[key])) continue;
    const members = s[key].filter((m) => !isNullSchema(m));
    if (members.length === s[key].length) continue;
    s.nullable = true;
    if (members.length === 1) {
      delete s[key];
      const only = members[0];
      if (only.$ref) s.allOf = [only];
      else Object.assign(s, { ...only, nullable: true });
    } else {
      s[key] = members;
    }
  }
  for (const key of ['items', 'not', 'additionalProperties']) s[key] = schema(s[key]);
  for (const key of ['oneOf', 'anyOf', 'allOf']) if (Array.isArray(s[key])) s[key] = s[key].map(schema);
  if (s.properties && typeof s.properties === 'object') {
    for (const name of Object.keys(s.properties)) s.properties[name] = schema(s.properties[name]);
  }
  return s;
}

// Walks the document and normalizes every schema position: components.schemas, parameters, bodies, responses.
function walk(node) {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach(walk);
  for (const [key, value] of Object.entries(node)) {
    if (key === 'schema') node[key] = schema(value);
    else if (key === 'schemas' && value && typeof value === 'object') {
      for (const name of Object.keys(value)) value[name] = schema(value[name], true);
    } else walk(value);
  }
}
const opTypeName = (id) =>
  id
    .split(/[._]/)
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
const IDEMPOTENCY_KEY_REF = '#/components/parameters/IdempotencyKey';
for (const item of Object.values(doc.paths ?? {})) {
  for (const op of Object.values(item ?? {})) {
    if (!op || typeof op !== 'object' || !op.operationId) continue;
    if (Array.isArray(op.parameters)) {
      op.parameters = op.parameters.filter((p) => p?.$ref !== IDEMPOTENCY_KEY_REF);
      if (op.parameters.length === 0) delete op.parameters;
    }
    for (const [code, res] of Object.entries(op.responses ?? {})) {
      const media = /^2\d\d$/.test(code) && res?.content?.['application/json'];
      if (!media || !media.schema || media.schema.$ref) continue;
      const name = `${opTypeName(op.operationId)}Result`;
      doc.components.schemas ??= {};
      if (doc.components.schemas[name]) throw new Error(`normalize-openapi: ${name} already exists`);
      doc.components.schemas[name] = media.schema;
      media.schema = { $ref: `#/components/schemas/${name}` };
    }
  }
}
walk(doc);
fs.writeFileSync(output, YAML.stringify(doc, { lineWidth: 0 }));
