import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { parse } from 'yaml';

/** The repo's openapi.yaml, loaded once, with response validators compiled on demand. */
export interface OpenApiDoc {
  paths: Record<
    string,
    Record<
      string,
      { operationId?: string; responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }
    >
  >;
}

const ROOT = join(__dirname, '../../..');
let doc: OpenApiDoc | undefined;
let ajv: Ajv2020 | undefined;
const validators = new Map<string, ValidateFunction>();

export function openApi(): OpenApiDoc {
  if (!doc) doc = parse(readFileSync(join(ROOT, 'openapi.yaml'), 'utf8')) as OpenApiDoc;
  return doc;
}

function compiler(): Ajv2020 {
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(openApi() as object, 'openapi.json');
  }
  return ajv;
}

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every (METHOD, /path/{param}) pair the contract describes. */
export function contractRoutes(): string[] {
  return Object.entries(openApi().paths).flatMap(([path, ops]) =>
    Object.keys(ops)
      .filter((m) => HTTP_METHODS.includes(m))
      .map((m) => `${m.toUpperCase()} ${path}`),
  );
}

/** Finds the contract path template that matches a concrete request path. */
export function matchPath(method: string, concrete: string): string | undefined {
  const candidates = Object.keys(openApi().paths).filter(
    (tpl) => openApi().paths[tpl]![method.toLowerCase()] !== undefined,
  );
  const exact = candidates.filter((tpl) => !tpl.includes('{')).find((tpl) => tpl === concrete);
  if (exact) return exact;
  return candidates.find((tpl) => new RegExp(`^${tpl.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(concrete));
}

/**
 * Validates a response body against the contract's schema for (method, path, status). Throws with
 * Ajv's errors when it does not conform, or when the contract does not document the status.
 */
export function assertMatchesContract(
  method: string,
  concretePath: string,
  status: number,
  body: unknown,
): void {
  const template = matchPath(method, concretePath);
  if (!template) throw new Error(`openapi.yaml has no ${method} ${concretePath}`);
  const op = openApi().paths[template]![method.toLowerCase()]!;
  const response = op.responses?.[String(status)] ?? op.responses?.default;
  if (!response) throw new Error(`openapi.yaml does not document ${status} for ${method} ${template}`);
  if (status === 204) {
    if (body !== undefined && body !== '') throw new Error(`204 from ${method} ${template} has a body`);
    return;
  }
  const key = `${method} ${template} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    const which = status in (op.responses ?? {}) ? String(status) : 'default';
    validate = compiler().compile({
      $ref: schemaPointer(template, method, which, response as { $ref?: string }),
    });
    validators.set(key, validate);
  }
  if (!validate(body)) {
    throw new Error(
      `${key} does not match openapi.yaml: ${JSON.stringify(validate.errors, null, 1).slice(0, 2000)}\nbody: ${JSON.stringify(body).slice(0, 1000)}`,
    );
  }
}

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** JSON pointer (inside the registered document) to the JSON schema of one response. */
function schemaPointer(
  template: string,
  method: string,
  status: string,
  response: { $ref?: string },
): string {
  const base = response.$ref
    ? `openapi.json${response.$ref}`
    : `openapi.json#/paths/${escape(template)}/${method.toLowerCase()}/responses/${status}`;
  return `${base}/content/application~1json/schema`;
}

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

/**
 * Every (METHOD, /path/{param}) an in-process Nest app serves, in the contract's spelling
 * (`:environmentId` → `{environment_id}`), read from Express's router.
 */
export function servedRoutes(app: { getHttpAdapter(): { getInstance(): unknown } }): string[] {
  const express = app.getHttpAdapter().getInstance() as { router: { stack: RouterLayer[] } };
  const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return express.router.stack
    .filter((l) => l.route)
    .flatMap((l) =>
      Object.keys(l.route!.methods)
        .filter((m) => m !== '_all')
        .map(
          (m) =>
            `${m.toUpperCase()} ${l.route!.path.replace(/:([A-Za-z]+)/g, (_, name: string) => `{${snake(name)}}`)}`,
        ),
    );
}

/** The routes the ingress sends to apps/files (Files, Skills, Memory Stores); everything else in openapi.yaml is apps/api's. */
export const FILES_ROUTES = /^(GET|POST|DELETE) \/v1\/(files|skills|memory_stores)/;
