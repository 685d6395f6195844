import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Middleware } from 'koa';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css',
  'swagger-ui-bundle.js': 'application/javascript',
  'swagger-ui-standalone-preset.js': 'application/javascript',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Platform API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/swagger-ui-standalone-preset.js"></script>
<script src="/docs/init.js"></script></body>
</html>`;

// both documents, in the top bar's "Select a definition" dropdown; Gen2 first (the default)
const INIT = `window.ui = SwaggerUIBundle({
  urls: [
    { url: '/api/openapi.json', name: 'Gen2 (/api)' },
    { url: '/openapi.gen1.json', name: 'Gen1 (legacy, root paths)' },
  ],
  'urls.primaryName': 'Gen2 (/api)',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
});`;

/**
 * The folder of the swagger-ui-dist package. Found, not imported: its main module evaluates the
 * whole browser bundle of Swagger UI in the server (about 0.4 s of start-up and its heap).
 */
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** Serves Swagger UI for `/api/openapi.json` at `/docs`, from the swagger-ui-dist package's files. */
export function docsMiddleware(): Middleware {
  const root = SWAGGER_UI_DIR;
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || !(ctx.path === '/docs' || ctx.path.startsWith('/docs/'))) return next();
    const name = ctx.path.slice('/docs/'.length);
    if (ctx.path === '/docs' || name === '' || name === 'index.html') {
      ctx.type = 'text/html';
      ctx.body = PAGE;
    } else if (name === 'init.js') {
      ctx.type = 'application/javascript';
      ctx.body = INIT;
    } else if (ASSETS[name]) {
      ctx.type = ASSETS[name];
      ctx.set('cache-control', 'public, max-age=3600');
      ctx.body = await readFile(join(root, name));
    } else {
      return next();
    }
  };
}
