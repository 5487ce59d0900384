import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/**
 * The web console: a Preact single-page app built to dist/apps/console and served by apps/api under
 * /console (the same origin as /v1, so no CORS and no second base URL). It talks to the public API only,
 * through the TypeScript SDK's sources.
 */
export default defineConfig({
  root: here('.'),
  base: '/console/',
  publicDir: false,
  resolve: {
    alias: [
      // The TypeScript SDK from its sources (as tsconfig.base.json maps it). Its Node-only webhook
      // verifier is never imported here, so the bundle tree-shakes it away.
      { find: /^@mango\/sdk$/, replacement: here('../../libs/sdk/typescript/src/index.ts') },
    ],
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: here('../../dist/apps/console'),
    emptyOutDir: true,
    sourcemap: true,
    target: 'es2022',
  },
  logLevel: 'warn',
});
