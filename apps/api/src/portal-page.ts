import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Middleware } from 'koa';
import type { AppDeps } from './deps';
import { portalFrameAncestors } from './features/webhook-portal/portal-session-service';
import { AppError } from './http/errors';

const PORTAL_PATH =
  /^\/portal\/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\/?$/;

/**
 * Serves the endpoint portal's page (docs/portal.md#embedding), `/portal/{sessionId}`: the built
 * console SPA (its index.html, which renders the portal at this path), with a
 * `Content-Security-Policy: frame-ancestors` of the session's `allowedOrigins` (`'none'` for a
 * session that names none, or an unknown id), so only the platform that opened the session can
 * frame it. The session id in the path is no credential: the token stays in the fragment, which
 * no browser sends. An ended session's page is still served, framed as before, so the portal can
 * say the session ended instead of the frame showing a browser error.
 */
export function portalPage(distDir: string, deps: AppDeps): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path !== '/portal' && !ctx.path.startsWith('/portal/')) return next();
    const index = join(distDir, 'index.html');
    if (!existsSync(index)) {
      throw new AppError('NotFound', 'The admin UI is not built; run `pnpm --filter @platform/admin build`');
    }
    const id = PORTAL_PATH.exec(ctx.path)?.[1]?.toLowerCase();
    const origins = id ? await portalFrameAncestors(deps, id) : [];
    ctx.set('Content-Security-Policy', `frame-ancestors ${origins.length ? origins.join(' ') : "'none'"}`);
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = await readFile(index);
  };
}
