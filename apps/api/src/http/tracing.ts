import { SpanStatusCode } from '@opentelemetry/api';
import { traceRequest } from '@platform/tracing';
import type Koa from 'koa';

/**
 * A server span per request (docs/dispatcher.md › Tracing), continuing the caller's `traceparent`:
 * what the request enqueues stores this span's context with its webhooks (write-path.ts). Named
 * `METHOD /route/{pattern}` once routed. Installed only when tracing is on.
 */
export function tracingMiddleware(): Koa.Middleware {
  return (ctx, next) =>
    traceRequest(ctx.method, ctx.headers, async (span) => {
      try {
        await next();
      } finally {
        const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
        if (typeof route === 'string') {
          span.updateName(`${ctx.method} ${route}`);
          span.setAttribute('http.route', route);
        }
        span.setAttribute('http.request.method', ctx.method);
        span.setAttribute('url.path', ctx.path);
        span.setAttribute('http.response.status_code', ctx.status);
        // a 4xx is the client's doing; a 5xx is ours
        if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      }
    });
}
