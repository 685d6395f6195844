import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { fieldError } from './errors';

export const SUPPORTED_API_VERSIONS = ['1', '1.0', '2', '2.0'] as const;
export const SERVED_LANGUAGE = 'en-DE';

/** Request id (echoed or made), security headers, `api-version` and `Accept-Language` (docs/decisions.md#api-conventions). */
export function requestHeaders(): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    ctx.state.requestId = /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
    ctx.set('x-request-id', ctx.state.requestId);
    ctx.set('x-content-type-options', 'nosniff');
    ctx.set('referrer-policy', 'no-referrer');
    // the router matches paths case-insensitively, so `/API/accounts` is an API path too
    if (!/^\/api\//i.test(ctx.path)) return next();

    ctx.set('api-supported-versions', '1.0, 2.0');
    // only en-DE is served; any other preference falls back to it rather than failing
    ctx.set('Content-Language', SERVED_LANGUAGE);
    // absent means 2.0; present but empty is not one of the versions
    const header = ctx.headers['api-version'];
    const version = header === undefined ? undefined : String(header).trim();
    if (version !== undefined && !(SUPPORTED_API_VERSIONS as readonly string[]).includes(version)) {
      throw fieldError(
        'api-version',
        `Unsupported api-version "${version.slice(0, 20)}"; use 1, 1.0, 2 or 2.0`,
      );
    }
    await next();
  };
}
