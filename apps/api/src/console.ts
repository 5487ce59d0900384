import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { static as serveStatic, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';

/** Where `npx nx run console:build` writes the web console (apps/console), from this source tree. */
export const DEFAULT_CONSOLE_DIR = join(__dirname, '../../../dist/apps/console');

/**
 * The console's pages may load only what this origin serves, talk only to this origin (the /v1 API),
 * and never be framed; inline scripts are refused.
 */
const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/**
 * Serves the built web console under `/console`: hashed assets with a long cache, every other GET under
 * /console answered with index.html (the single-page app routes itself, e.g. /console/sessions/sesn_…).
 * Plain Express handlers, outside the /v1 contract and its auth: the page holds no data, it signs in with a
 * Workspace key and calls /v1 like any client. Without a build, /console is the ordinary 404 and a warning
 * says how to build it.
 */
export function mountConsole(app: NestExpressApplication, dir: string, log: Logger): void {
  const index = join(dir, 'index.html');
  if (!existsSync(index)) {
    log.warn({ dir }, 'web console not built (npx nx run console:build); /console is not served');
    return;
  }
  const headers = (res: Response) => {
    res.setHeader('content-security-policy', CONSOLE_CSP);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
  };
  app.use(
    '/console',
    serveStatic(dir, {
      index: false,
      redirect: false,
      fallthrough: true,
      setHeaders: (res, path) => {
        headers(res as Response);
        res.setHeader(
          'cache-control',
          path.includes(`${join(dir, 'assets')}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
        );
      },
    }),
  );
  app.use('/console', (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    // A missing asset is a 404, not the page.
    if (req.path.startsWith('/assets/')) return next();
    if (req.originalUrl === '/console') return res.redirect(308, '/console/');
    headers(res);
    res.setHeader('cache-control', 'no-cache');
    res.sendFile(index);
  });
  log.info({ dir }, 'web console served at /console');
}
