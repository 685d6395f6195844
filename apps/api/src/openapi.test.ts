import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from './http/openapi';
import { ROUTES } from './routes';
import { startTestApi, type TestApi } from './test-support';

const SNAPSHOT = join(import.meta.dirname, '..', 'openapi.json');

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

describe('OpenAPI document', () => {
  it('matches the committed apps/api/openapi.json (run `pnpm openapi` after changing a route)', () => {
    const current = `${JSON.stringify(buildOpenApiDocument(ROUTES), null, 2)}\n`;
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
