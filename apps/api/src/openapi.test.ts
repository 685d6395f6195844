import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from './http/openapi';
import { ROUTES, WEBHOOKS } from './routes';
import { useTestApi } from '../tests/support/api';

const SNAPSHOT = join(import.meta.dirname, '..', 'openapi.json');

const { api } = useTestApi();

describe('OpenAPI document', () => {
  it('matches the committed apps/api/openapi.json (run `pnpm openapi` after changing a route)', () => {
    const current = `${JSON.stringify(buildOpenApiDocument(ROUTES, { webhooks: WEBHOOKS }), null, 2)}\n`;
    if (process.env.UPDATE_OPENAPI === '1') writeFileSync(SNAPSHOT, current);
    expect(current).toBe(readFileSync(SNAPSHOT, 'utf8'));
  });

  it('lists every route with its method', () => {
    const document = buildOpenApiDocument(ROUTES);
    for (const route of ROUTES) {
      const path = route.path.replace(/:(\w+)/g, '{$1}');
      expect(document.paths?.[path]?.[route.method], `${route.method} ${path}`).toBeDefined();
    }
  });

  it('has a server, a license and a unique operationId on every operation', () => {
    const document = buildOpenApiDocument(ROUTES);
    expect(document.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(document.info.license?.name).toBeTruthy();
    const ids = Object.values(document.paths ?? {}).flatMap((item) =>
      Object.values(item as Record<string, { operationId?: string }>).map(
        (operation) => operation.operationId,
      ),
    );
    expect(ids).toHaveLength(ROUTES.length);
    for (const id of ids) expect(id).toMatch(/^(get|post|put|patch|delete)[A-Z][A-Za-z0-9]*$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.paths?.['/api/accounts/{id}']?.get?.operationId).toBe('getAccountsById');
  });

  it('documents the 401 and 403 that public auth routes answer', async () => {
    const document = buildOpenApiDocument(ROUTES);
    const refused = await api.fetch('/api/auth/refresh', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken: 'not-a-token' }),
    });
    expect(refused.status).toBe(401);
    expect(document.paths?.['/api/auth/refresh']?.post?.responses?.['401']).toBeDefined();
    expect(document.paths?.['/api/auth/login/mfa']?.post?.responses?.['401']).toBeDefined();
    expect(
      document.paths?.['/api/auth/change-password-with-recovery-code']?.put?.responses?.['403'],
    ).toBeDefined();
  });

  it('names the request and answer schemas as clients of the platform know them', () => {
    const schemas = buildOpenApiDocument(ROUTES).components?.schemas ?? {};
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining(['AccountSearchRequest', 'UnblockRecoveryCodeResponseDto']),
    );
  });

  it('is served at /api/openapi.json without a token', async () => {
    const response = await api.fetch('/api/openapi.json');
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    expect(document.openapi).toBe('3.1.0');
    expect(document.paths['/api/auth/login']?.post).toBeDefined();
  });

  it('is browsable at /docs with the bundled Swagger UI', async () => {
    const page = await api.fetch('/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('swagger-ui-bundle.js');
    const bundle = await api.fetch('/docs/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    const init = await api.fetch('/docs/init.js');
    expect(await init.text()).toContain('/api/openapi.json');
  });
});
