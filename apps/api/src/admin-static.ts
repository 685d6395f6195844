import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { Middleware } from 'koa';
import { AppError } from './http/errors';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

/**
 * Serves the built admin SPA (`apps/admin/dist`) under `/admin`; paths without a file fall back
 * to index.html so client-side routes survive a reload. Hashed assets are cached for a year.
 */
export function adminStatic(distDir: string): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path !== '/admin' && !ctx.path.startsWith('/admin/')) return next();
    if (!existsSync(join(distDir, 'index.html'))) {
      throw new AppError('NotFound', 'The admin UI is not built; run `pnpm --filter @platform/admin build`');
    }
    const relative = normalize(decodeURIComponent(ctx.path.slice('/admin'.length)) || '/');
    const file = join(distDir, relative);
    if (!file.startsWith(distDir + sep) && file !== distDir) throw new AppError('NotFound');
    const isFile = await stat(file).then(
      (s) => s.isFile(),
      () => false,
    );
    const target = isFile ? file : join(distDir, 'index.html');
    ctx.type = TYPES[extname(target)] ?? 'application/octet-stream';
    ctx.set(
      'cache-control',
      isFile && relative.startsWith(`${sep}assets${sep}`)
        ? 'public, max-age=31536000, immutable'
        : 'no-cache',
    );
    ctx.body = await readFile(target);
  };
}
