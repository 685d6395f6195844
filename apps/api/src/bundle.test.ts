import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PartyType } from '@platform/shared';
import { createTestDatabase, startApi, type ApiProcess, type TestDatabase } from '@platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAccount, buildParty, TEST_PASSWORD, testPrivateKeyPem } from '../tests/support/api';

// The API as production runs it: the esbuild bundle (apps/api/build.mjs) under plain Node with the
// flags of its `start` script. What the bundle must find at run time is exercised here: the
// argon2 native module (a password login), swagger-ui-dist's files (/docs) and the admin folder.
describe('the production bundle', () => {
  let db: TestDatabase;
  let api: ApiProcess;
  let adminDir: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    adminDir = await mkdtemp(join(tmpdir(), 'admin-dist-'));
    await writeFile(join(adminDir, 'index.html'), '<!doctype html><title>console</title>');
    api = await startApi(
      db.url,
      { JWT_PRIVATE_KEY: testPrivateKeyPem(), ADMIN_DIST_DIR: adminDir },
      { bundle: true, timeoutMs: 60_000 },
    );
  }, 120_000);

  afterAll(async () => {
    await api?.stop();
    await db?.drop();
    await rm(adminDir, { recursive: true, force: true });
  });

  it('serves /healthz, a password login and an authenticated read', async () => {
    const health = await fetch(`${api.url}/healthz`);
    expect(health.status).toBe(200);
    // the bundle runs on the Node that started it: the pinned one under `pnpm test`
    expect(await health.json()).toEqual({ status: 'ok', runtime: { node: process.version } });

    const party = await buildParty(db, { type: PartyType.PropertyManagementCompany });
    const account = await buildAccount(db, { partyId: party.id });
    await db.knex('properties').insert({
      party_id: party.id,
      name: 'Bundled',
      street: 'Hauptstraße',
      postal_code: '10115',
      city: 'Berlin',
      country: 'DE',
    });
    const login = await fetch(`${api.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: account.email, password: TEST_PASSWORD }),
    });
    expect(login.status).toBe(200);
    const { accessToken } = (await login.json()) as { accessToken: string };

    const list = await fetch(`${api.url}/api/properties`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(list.status).toBe(200);
    const page = (await list.json()) as { items: { name: string }[]; totalCount: number };
    expect(page.items.map((p) => p.name)).toEqual(['Bundled']);

    const anonymous = await fetch(`${api.url}/api/properties`);
    expect(anonymous.status).toBe(401);
  });

  it('serves the Swagger UI assets and the admin console from their folders', async () => {
    const css = await fetch(`${api.url}/docs/swagger-ui.css`);
    expect(css.status).toBe(200);
    expect((await css.text()).length).toBeGreaterThan(1000);
    const admin = await fetch(`${api.url}/admin/properties`);
    expect(admin.status).toBe(200);
    expect(await admin.text()).toContain('<title>console</title>');
    const openApi = await fetch(`${api.url}/api/openapi.json`);
    expect(((await openApi.json()) as { openapi: string }).openapi).toMatch(/^3\./);
  });
});
