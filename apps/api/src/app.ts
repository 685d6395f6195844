import Router from '@koa/router';
import Koa from 'koa';
import { answerClientError } from '@platform/shared';
import { adminStatic } from './admin-static';
import { portalPage } from './portal-page';
import type { AppDeps } from './deps';
import { buildGen1OpenApiDocument } from './gen1/gen1-openapi';
import { gen1Api } from './gen1/gen1-router';
import { docsMiddleware } from './http/docs';
import { errorMiddleware } from './http/error-middleware';
import { requestHeaders } from './http/headers';
import { tracingActive } from '@platform/tracing';
import { buildOpenApiDocument } from './http/openapi';
import { allowedMethods, buildRouter } from './http/router';
import { tracingMiddleware } from './http/tracing';
import type { RouteDefinition } from './http/route';
import { ROUTES, WEBHOOKS } from './routes';

/** Builds the API: shared conventions as middleware, then the routes. No listening here. */
export function createApp(deps: AppDeps, routes: readonly RouteDefinition[] = ROUTES): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true; // errors are logged by the error middleware, once
  const openApi = buildOpenApiDocument(routes, { webhooks: WEBHOOKS });
  const gen1OpenApi = buildGen1OpenApiDocument();

  const meta = new Router();
  meta.get('/.well-known/jwks.json', (ctx) => {
    ctx.set('cache-control', 'public, max-age=300');
    ctx.body = deps.tokens.jwks();
  });
  meta.get('/api/openapi.json', (ctx) => {
    ctx.body = openApi;
  });
  meta.get('/openapi.gen1.json', (ctx) => {
    ctx.body = gen1OpenApi;
  });
  meta.get('/healthz', async (ctx) => {
    await deps.knex.raw('select 1');
    // the runtime too, so an operator sees which Node a replica really runs (README, "Runtime")
    ctx.body = { status: 'ok', runtime: { node: process.version } };
  });

  const router = buildRouter(routes, deps);
  if (tracingActive()) app.use(tracingMiddleware());
  app.use(errorMiddleware(deps.logger));
  app.use(requestHeaders());
  app.use(docsMiddleware());
  app.use(adminStatic(deps.config.ADMIN_DIST_DIR));
  app.use(portalPage(deps.config.ADMIN_DIST_DIR, deps));
  app.use(meta.routes());
  app.use(router.routes());
  // the Gen1 legacy API at root paths, with its own tokens (docs/gen1-to-gen2.md)
  app.use(gen1Api(deps));
  app.use(allowedMethods(router));
  // every server of the app (main's, the tests') answers a request Node cannot parse with a
  // ProblemDetails too (a head over 16 KiB: 431), not Node's bare status line
  const listen = app.listen.bind(app);
  app.listen = ((...args: Parameters<typeof app.listen>) =>
    listen(...args).on('clientError', answerClientError)) as typeof app.listen;
  return app;
}
