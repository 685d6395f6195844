import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAccount, buildParty, login, startTestApi, type TestApi } from '../tests/support/api';

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

describe('the endpoint portal at /portal/{sessionId}', () => {
  it('serves the SPA, framable only by the session’s allowed origins, also once the session ended', async () => {
    const party = await buildParty(api.deps, { type: 2 });
    const account = await buildAccount(api.deps, { partyId: party.id, permissions: 'all' });
    const { accessToken } = await login(api, account.email);
    const open = async (allowedOrigins: string[]) => {
      const response = await api.fetch('/api/webhook-portal/sessions', {
        method: 'POST',
        token: accessToken,
        json: { partyId: party.id, actions: [], expiresIn: '1h', allowedOrigins },
      });
      expect(response.status).toBe(201);
      return (await response.json()) as { id: string; url: string };
    };
    const session = await open(['https://app.example.com', 'http://127.0.0.1:4100']);
    const page = await api.fetch(new URL(session.url).pathname);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('id="root"');
    expect(page.headers.get('content-security-policy')).toBe(
      'frame-ancestors https://app.example.com http://127.0.0.1:4100',
    );
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');

    const unframed = await open([]);
    expect((await api.fetch(`/portal/${unframed.id}`)).headers.get('content-security-policy')).toBe(
      "frame-ancestors 'none'",
    );
    for (const path of ['/portal', '/portal/', '/portal/00000000-0000-4000-8000-000000000000', '/portal/x']) {
      const response = await api.fetch(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-security-policy'), path).toBe("frame-ancestors 'none'");
    }

    // revoked: the page still comes, in the same frame, to say so
    const revoked = await api.fetch(`/api/webhook-portal/sessions/${session.id}`, {
      method: 'DELETE',
      token: accessToken,
    });
    expect(revoked.status).toBe(204);
    expect((await api.fetch(`/portal/${session.id}`)).headers.get('content-security-policy')).toBe(
      'frame-ancestors https://app.example.com http://127.0.0.1:4100',
    );
  });
});
