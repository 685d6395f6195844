import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../tests/support/api';

let api: TestApi;
let emptyApi: TestApi;
beforeAll(async () => {
  const dist = mkdtempSync(join(tmpdir(), 'admin-dist-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), '<!doctype html><div id="root"></div>');
  writeFileSync(join(dist, 'assets', 'app-1234.js'), 'console.log(1)');
  api = await startTestApi({ ADMIN_DIST_DIR: dist });
  emptyApi = await startTestApi({ ADMIN_DIST_DIR: mkdtempSync(join(tmpdir(), 'admin-empty-')) });
});
afterAll(async () => {
  await api.close();
  await emptyApi.close();
});

describe('admin SPA at /admin', () => {
  it('serves index.html, assets with long caching, and falls back to index.html for client routes', async () => {
    const index = await api.fetch('/admin/');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toContain('text/html');
    const asset = await api.fetch('/admin/assets/app-1234.js');
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(await asset.text()).toBe('console.log(1)');
    const route = await api.fetch('/admin/webhooks/42');
    expect(await route.text()).toContain('id="root"');
  });

  it('never serves files outside its folder', async () => {
    const response = await api.fetch('/admin/..%2f..%2f..%2fetc%2fpasswd');
    expect(await response.text()).not.toContain('root:');
  });

  it('says how to build it when it is missing', async () => {
    const response = await emptyApi.fetch('/admin/');
    expect(response.status).toBe(404);
    expect(((await response.json()) as { detail: string }).detail).toContain('admin build');
  });
});
