import type { IncomingMessage, Server } from 'node:http';
import { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { json, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { invalidRequest } from '@mango/domain-kernel';
import type { MangoMetrics } from '@mango/platform-metrics';
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  tracer,
  tracingEnabled,
} from '@mango/platform-tracing';
import { ApiExceptionFilter, renderError, sendError } from './api-exception.filter';
import { DEFAULT_JSON_LIMITS, jsonLimitError, JsonLimits, scanJson } from './json-limits';
import { JsonReplyExpressAdapter } from './json-reply-adapter';
import { NestPinoLogger } from './nest-pino-logger';
import {
  EARLY_AUTHENTICATOR,
  EarlyAuthenticator,
  leaveBodyUnread,
  refuseContentEncoding,
} from './request-body';
import { assignRequestId } from './request-id';
import { answerMalformedHeadersWithEnvelope, rejectUnstorableText } from './storable-text';

/** See {@link HttpAppOptions.keepAliveTimeoutMs}. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 65_000;

export interface HttpAppOptions {
  log: Logger;
  /** Largest accepted JSON body, e.g. '32mb' or a number of bytes. */
  jsonLimit?: string | number;
  /** Deepest nesting and most values of a JSON body (default `DEFAULT_JSON_LIMITS`). */
  jsonShape?: JsonLimits;
  /** Observes `mango_http_request_duration_seconds` by route template when given. */
  metrics?: MangoMetrics;
  /**
   * Requests whose body the JSON parser must leave unread, for their handler to stream (apps/files'
   * uploads). Their path and query are still checked for storable text.
   */
  streamedBody?: (req: Request) => boolean;
  /**
   * How long an idle keep-alive connection stays open (default 65 s). Node's own default is 5 s: a
   * client or load balancer that reuses a pooled connection at the moment the server closes it gets a
   * reset. Above the usual balancer idle timeout (60 s), the balancer closes first.
   */
  keepAliveTimeoutMs?: number;
  /**
   * The proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (Express's `trust proxy`;
   * MANGO_TRUSTED_PROXIES, parsed by `parseTrustedProxies`). Empty or unset: none, the peer is the client.
   */
  trustedProxies?: string[];
  /** Mounts plain Express handlers (e.g. static files) after the request middleware, before the routes. */
  beforeRoutes?: (app: NestExpressApplication) => void;
}

/**
 * Builds a Nest HTTP app with Mango's wire conventions: request ids, JSON bodies with a size limit,
 * the error envelope for every failure (including malformed JSON, unknown routes and text PostgreSQL
 * cannot store), pino logs, and
 * graceful shutdown through `runMain`.
 */
export async function createHttpApp(
  module: Type<unknown> | DynamicModule,
  options: HttpAppOptions,
): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module, new JsonReplyExpressAdapter(), {
    bodyParser: false,
    logger: new NestPinoLogger(options.log),
    abortOnError: false,
  });
  const express = app.getHttpAdapter().getInstance();
  express.disable('x-powered-by');
  // No ETag on API responses: every body is dynamic JSON, and Express's default hashed each one (SHA-1)
  // on every request for a conditional GET no Mango client makes (docs/api-guide.md).
  express.set('etag', false);
  express.set('query parser', 'extended');
  // req.ip and req.protocol (access log) come from X-Forwarded-* only when the peer is a trusted proxy.
  express.set('trust proxy', options.trustedProxies?.length ? options.trustedProxies : false);
  // The per-request middleware is two Express layers, not six: Express walks its stack layer by layer for
  // every request, and Poll and Ack are the requests every supervisor repeats.
  app.use(perRequest(options.log, options.metrics));
  const shape = options.jsonShape ?? DEFAULT_JSON_LIMITS;
  // Text PostgreSQL cannot store (NUL, unpaired surrogates) in a path parameter, the query or the body:
  // one 400 naming the field for every route, before any handler runs. A JSON body whose text holds no
  // escape that could encode such text is not walked.
  const bodiesWithoutEscapes = new WeakSet<IncomingMessage>();
  const parseJson = json({
    limit: options.jsonLimit ?? '32mb',
    strict: false,
    // Compressed bodies are refused before this parser (refuseContentEncoding); never inflate.
    inflate: false,
    type: (req: IncomingMessage) => !declaresEmptyBody(req),
    // The raw bytes, before JSON.parse builds anything: depth and value count in one linear pass.
    verify: (req: IncomingMessage, _res, buf: Buffer, charset: string) => {
      options.metrics?.httpRequestBodyBytes.inc(buf.length);
      const scan = scanJson(utf8(buf, charset), shape);
      if (!scan.ok) throw jsonLimitError(scan.exceeded, shape);
      if (!scan.escapesToCheck) bodiesWithoutEscapes.add(req);
    },
  });
  const storable = rejectUnstorableText((req) => !bodiesWithoutEscapes.has(req));
  const streamed = options.streamedBody;
  // Nothing expensive before authentication: the credential is checked from the headers first (the
  // auth feature's EARLY_AUTHENTICATOR, which puts the principal on the request); a request without a
  // valid one never has its body read — its route answers (401 from the guard, or a public route) with
  // the body unread. Only then is a compressed body refused and the body parsed.
  const early = earlyAuthenticator(app);
  const readBody = (req: Request, res: Response, next: NextFunction) => {
    const refused = refuseContentEncoding(req);
    if (refused) return next(refused);
    // The body is wanted now: a client waiting on `Expect: 100-continue` may send it.
    if (expectsContinue(req)) res.writeContinue();
    if (streamed?.(req)) return storable(req, res, next);
    parseJson(req, res, (err?: unknown) => (err ? next(err) : storable(req, res, next)));
  };
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!early) return readBody(req, res, next);
    early
      .authenticateFromHeaders(req)
      .then(({ ok }) => {
        if (ok) return readBody(req, res, next);
        leaveBodyUnread(req, res);
        storable(req, res, next);
      })
      .catch((err: unknown) => next(err));
  });
  const server = app.getHttpServer() as Server;
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  // Node's rule: the headers timeout must exceed the keep-alive timeout, or a slow next request on a
  // kept connection is cut by the wrong timer.
  server.headersTimeout = Math.max(server.headersTimeout, server.keepAliveTimeout + 1_000);
  answerMalformedHeadersWithEnvelope(server);
  // `Expect: 100-continue`: Node would answer 100 Continue before any middleware runs, inviting the
  // body before the credential was checked. The request goes to the app as any other instead, and
  // `readBody` sends 100 Continue only once it authenticated; a refused one is answered without it.
  if (early) server.on('checkContinue', (req, res) => server.emit('request', req, res));
  app.useGlobalFilters(new ApiExceptionFilter(options.log));
  options.beforeRoutes?.(app);
  // Errors raised before routing (body parser) reach Express's error chain: render them too.
  await app.init();
  express.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    sendError(res, renderError(err, req, options.log));
  });
  return app;
}

/**
 * The body as UTF-8 bytes for `scanJson`, whose byte-level view of quotes, brackets and escapes holds
 * only for UTF-8 (and ASCII): a UTF-16 body (body-parser accepts any `utf-*` charset) is transcoded
 * first; a charset the platform cannot decode is a 400.
 */
function utf8(buf: Buffer, charset: string | undefined): Buffer {
  const name = (charset ?? 'utf-8').toLowerCase();
  if (name === 'utf-8' || name === 'utf8') return buf;
  try {
    return Buffer.from(new TextDecoder(name).decode(buf), 'utf8');
  } catch {
    throw invalidRequest(`unsupported request body charset "${name.slice(0, 32)}": send UTF-8 JSON`);
  }
}

const expectsContinue = (req: IncomingMessage) => req.headers.expect?.toLowerCase() === '100-continue';

/** The auth feature's header check, when the app's module provides one (apps/api and apps/files do). */
function earlyAuthenticator(app: INestApplication): EarlyAuthenticator | undefined {
  try {
    return app.get<EarlyAuthenticator>(EARLY_AUTHENTICATOR, { strict: false });
  } catch {
    return undefined;
  }
}

/**
 * Every request's bookkeeping in one layer: its request id, the SERVER span (while tracing is on), the
 * access log and duration metric, and the empty-body shortcut: a request that declares an empty body
 * gets what the JSON parser would make of it ({}) without streaming zero bytes through it (Ack, Stop and
 * other bodiless POSTs).
 */
function perRequest(log: Logger, metrics?: MangoMetrics) {
  const logRequest = accessLog(log, metrics);
  return (req: Request, res: Response, next: NextFunction): void => {
    assignRequestId(req, res);
    if (declaresEmptyBody(req)) req.body = {};
    if (!tracingEnabled()) {
      logRequest(req, res);
      return next();
    }
    traceRequests(req, res, () => {
      logRequest(req, res);
      next();
    });
  };
}

function accessLog(log: Logger, metrics?: MangoMetrics) {
  return (req: Request, res: Response): void => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // The matched route's template (never the raw path, whose ids would explode the label set).
      const route = (req.route as { path?: unknown } | undefined)?.path;
      metrics?.httpRequestDuration.observe(
        {
          method: req.method,
          route: typeof route === 'string' ? `${req.baseUrl ?? ''}${route}` : 'unmatched',
          status_code: String(res.statusCode),
        },
        ms / 1000,
      );
      const level = res.statusCode >= 500 ? 'error' : 'info';
      if (!log.isLevelEnabled(level)) return;
      log[level](
        {
          request_id: req.requestId,
          method: req.method,
          path: req.path,
          client_ip: req.ip,
          protocol: req.protocol,
          status: res.statusCode,
          ms: Math.round(ms * 10) / 10,
        },
        'request',
      );
    });
  };
}

/**
 * One SERVER span per request, continuing an inbound W3C `traceparent` (the SDKs send one); the handler
 * runs in its context, so spans and stored trace context below it join the caller's trace. Named
 * `<METHOD> <route template>` once routed. Skipped while tracing is not configured.
 */
function traceRequests(req: Request, res: Response, next: () => void) {
  const parent = propagation.extract(context.active(), req.headers);
  const span = tracer().startSpan(
    req.method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': req.method,
        'url.path': req.path,
        'mango.request_id': req.requestId,
      },
    },
    parent,
  );
  res.on('finish', () => {
    const route = (req.route as { path?: unknown } | undefined)?.path;
    if (typeof route === 'string') {
      span.updateName(`${req.method} ${req.baseUrl ?? ''}${route}`);
      span.setAttribute('http.route', `${req.baseUrl ?? ''}${route}`);
    }
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  context.with(trace.setSpan(parent, span), next);
}

/**
 * `Content-Length: 0` and nothing that could make the JSON parser refuse it (no content type, charset
 * or content encoding to check): the body is empty and parses to `{}`, exactly as body-parser's own
 * empty-body rule makes it.
 */
function declaresEmptyBody(req: IncomingMessage): boolean {
  const h = req.headers;
  return (
    h['content-length'] === '0' &&
    h['transfer-encoding'] === undefined &&
    h['content-type'] === undefined &&
    h['content-encoding'] === undefined
  );
}
