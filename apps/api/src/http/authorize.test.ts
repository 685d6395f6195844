import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { loadSigningKey, signWebhookToken } from '@platform/crypto';
import {
  ALL_PARTY_TYPES,
  encodePermissions,
  PartyType,
  permissionByName,
  TokenScope,
} from '@platform/shared';
import { decodeJwt, SignJWT } from 'jose';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../app';
import { register } from '../../tests/support/webhooks';
import type { Principal } from '../auth/principal';
import { buildAccount, buildParty, login, testPrivateKeyPem, useTestApi } from '../../tests/support/api';
import { defineRoute, type RouteAuth } from './route';
import { authorize } from './router';

const PARTY_TYPE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(PartyType).map(([name, value]) => [value, name]),
);

/** Handler calls per route, to prove a refused request never reached its handler. */
const handled: Record<string, number> = {};
const count = (name: string) => (handled[name] = (handled[name] ?? 0) + 1);

const Body = z.strictObject({ name: z.string().min(3) });

const TEST_ROUTES = [
  defineRoute({
    method: 'get',
    path: '/test/admin-only',
    summary: 'Admins only',
    tags: ['Test'],
    auth: { allow: [PartyType.Admin] },
    handler: () => ({ route: 'admin-only', n: count('admin-only') }),
  }),
  defineRoute({
    method: 'get',
    path: '/test/companies',
    summary: 'Admins and property management companies',
    tags: ['Test'],
    auth: { allow: [PartyType.Admin, PartyType.PropertyManagementCompany] },
    handler: () => ({ route: 'companies', n: count('companies') }),
  }),
  defineRoute({
    method: 'get',
    path: '/test/needs-permission',
    summary: 'Everyone holding Property.Create',
    tags: ['Test'],
    auth: { allow: ALL_PARTY_TYPES, permission: 'Property.Create' },
    handler: ({ principal }) => ({ route: 'needs-permission', accountId: principal.accountId }),
  }),
  defineRoute({
    method: 'get',
    path: '/test/users-with-permission',
    summary: 'Users only, naming a permission they are not checked for',
    tags: ['Test'],
    auth: { allow: [PartyType.User], permission: 'Webhook.Delete' },
    handler: () => ({ route: 'users-with-permission' }),
  }),
  defineRoute({
    method: 'post',
    path: '/test/body',
    summary: 'Admins holding Account.Create, with a body',
    tags: ['Test'],
    auth: { allow: [PartyType.Admin], permission: 'Account.Create' },
    body: Body,
    handler: ({ body }) => ({ route: 'body', name: body.name, n: count('body') }),
  }),
  defineRoute({
    method: 'put',
    path: '/test/change-password',
    summary: 'Only for change-password tokens',
    tags: ['Test'],
    auth: { allow: ALL_PARTY_TYPES, scopes: [TokenScope.ChangePassword] },
    handler: () => ({ route: 'change-password', n: count('change-password') }),
  }),
  defineRoute({
    method: 'put',
    path: '/test/either-scope',
    summary: 'Platform and change-password tokens',
    tags: ['Test'],
    auth: { allow: ALL_PARTY_TYPES, scopes: [TokenScope.Platform, TokenScope.ChangePassword] },
    handler: () => ({ route: 'either-scope' }),
  }),
  defineRoute({
    method: 'get',
    path: '/test/principal',
    summary: 'Echoes the principal',
    tags: ['Test'],
    auth: { allow: ALL_PARTY_TYPES },
    handler: ({ principal }) => ({ ...principal, permissions: [...principal.permissions] }),
  }),
  defineRoute({
    method: 'get',
    path: '/test/public',
    summary: 'Anyone',
    tags: ['Test'],
    auth: 'public',
    handler: () => ({ route: 'public' }),
  }),
];

const { api } = useTestApi();
let server: Server;
let baseUrl: string;

/** A request to the test app. */
function send(path: string, init: { method?: string; token?: string; body?: string; type?: string } = {}) {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = init.type ?? 'application/json';
  return fetch(`${baseUrl}${path}`, { method: init.method ?? 'GET', headers, body: init.body });
}

/** Logs in a new account of a new party of `type`. */
async function tokenFor(
  type: PartyType,
  options: {
    permissions?: Parameters<typeof buildAccount>[1]['permissions'];
    mustChangePassword?: boolean;
  } = {},
): Promise<string> {
  const party = await buildParty(api.deps, { type });
  const account = await buildAccount(api.deps, {
    partyId: party.id,
    permissions: options.permissions ?? 'all',
    mustChangePassword: options.mustChangePassword ?? false,
  });
  return (await login(api, account.email)).accessToken;
}

async function expectForbidden(response: Response, detail: RegExp) {
  expect(response.status).toBe(403);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ status: 403, title: 'Forbidden', detail: expect.stringMatching(detail) });
  expect(body).not.toHaveProperty('errors');
  return body;
}

let admin: string;
beforeAll(async () => {
  server = createApp(api.deps, TEST_ROUTES).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  admin = await tokenFor(PartyType.Admin);
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});
beforeEach(async () => {
  await api.deps.knex('rate_limit_hits').del();
});

describe('allow: party types', () => {
  it('lets a listed party type call the route', async () => {
    const response = await send('/test/admin-only', { token: admin });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ route: 'admin-only' });
  });

  it.each(ALL_PARTY_TYPES.filter((type) => type !== PartyType.Admin))(
    'refuses party type %i on an admins-only route with a 403 naming it',
    async (type) => {
      const before = handled['admin-only'] ?? 0;
      const token = await tokenFor(type);
      const body = await expectForbidden(
        await send('/test/admin-only', { token }),
        new RegExp(`Party type ${PARTY_TYPE_NAMES[type]} \\(${type}\\)`),
      );
      expect(body.instance).toBe('/test/admin-only');
      expect(handled['admin-only'] ?? 0).toBe(before);
    },
  );

  it('checks every listed type', async () => {
    const company = await tokenFor(PartyType.PropertyManagementCompany);
    expect((await send('/test/companies', { token: company })).status).toBe(200);
    expect((await send('/test/companies', { token: admin })).status).toBe(200);
    await expectForbidden(
      await send('/test/companies', { token: await tokenFor(PartyType.Contractor) }),
      /Contractor \(5\)/,
    );
  });

  it('does not exempt Users (7) from `allow`, only from permissions', async () => {
    const user = await tokenFor(PartyType.User, { permissions: [] });
    await expectForbidden(await send('/test/admin-only', { token: user }), /User \(7\)/);
  });

  it('hands the handler the principal of the token', async () => {
    const token = await tokenFor(PartyType.Contractor, { permissions: ['Account.Read'] });
    const claims = decodeJwt(token);
    const response = await send('/test/principal', { token });
    expect(await response.json()).toEqual({
      accountId: Number(claims.sub),
      partyId: Number(claims.partyId),
      partyName: claims.partyName,
      partyType: PartyType.Contractor,
      email: claims.email,
      scope: 'platform',
      permissions: [1],
    });
  });
});

describe('permission', () => {
  it('refuses a caller without the permission with a 403 naming it', async () => {
    const token = await tokenFor(PartyType.PropertyManagementCompany, {
      permissions: ['Property.Read', 'Property.Update', 'Account.Create'],
    });
    await expectForbidden(await send('/test/needs-permission', { token }), /Property\.Create/);
  });

  it('lets a caller holding it in', async () => {
    const token = await tokenFor(PartyType.Contractor, { permissions: ['Property.Create'] });
    expect((await send('/test/needs-permission', { token })).status).toBe(200);
  });

  it('applies to Admins too', async () => {
    const token = await tokenFor(PartyType.Admin, { permissions: ['Account.Read'] });
    await expectForbidden(await send('/test/needs-permission', { token }), /Property\.Create/);
  });

  it('is not checked for party type User (7)', async () => {
    const user = await tokenFor(PartyType.User, { permissions: [] });
    expect(decodeJwt(user).accountRole).toBe('7');
    expect((await send('/test/needs-permission', { token: user })).status).toBe(200);
    expect((await send('/test/users-with-permission', { token: user })).status).toBe(200);
  });

  it('is read from the token, not the database', async () => {
    // a token minted with the API's key for an account holding nothing, yet claiming Property.Create
    const party = await buildParty(api.deps, { type: PartyType.Contractor });
    const account = await buildAccount(api.deps, { partyId: party.id, permissions: [] });
    const real = await login(api, account.email);
    const claims = decodeJwt(real.accessToken);
    expect((await send('/test/needs-permission', { token: real.accessToken })).status).toBe(403);
    const key = await loadSigningKey(testPrivateKeyPem());
    const withPermission = await new SignJWT({
      ...claims,
      permissions: encodePermissions([permissionByName('Property.Create').id]),
    })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
      .sign(key.privateKey);
    expect((await send('/test/needs-permission', { token: withPermission })).status).toBe(200);
    // a garbage claim is no permission at all
    const garbage = await new SignJWT({ ...claims, permissions: '////' })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
      .sign(key.privateKey);
    await expectForbidden(await send('/test/needs-permission', { token: garbage }), /Property\.Create/);
  });
});

describe('scopes', () => {
  let changePassword: string;
  beforeAll(async () => {
    changePassword = await tokenFor(PartyType.Admin, { mustChangePassword: true });
  });

  it('refuses a change-password token on platform routes (the default scope)', async () => {
    expect(decodeJwt(changePassword).scope).toBe('change-password');
    await expectForbidden(
      await send('/test/admin-only', { token: changePassword }),
      /scope "change-password"/,
    );
    await expectForbidden(
      await send('/test/principal', { token: changePassword }),
      /scope "change-password"/,
    );
    // and on the real API
    const response = await api.fetch('/api/accounts/myself', { token: changePassword });
    expect(response.status).toBe(403);
  });

  it('allows it on a route with scopes [change-password]', async () => {
    const response = await send('/test/change-password', { method: 'PUT', token: changePassword });
    expect(response.status).toBe(200);
    expect((await send('/test/either-scope', { method: 'PUT', token: changePassword })).status).toBe(200);
  });

  it('refuses a platform token on a change-password-only route', async () => {
    await expectForbidden(
      await send('/test/change-password', { method: 'PUT', token: admin }),
      /scope "platform"/,
    );
    expect((await send('/test/either-scope', { method: 'PUT', token: admin })).status).toBe(200);
  });

  it('refuses a webhook token on platform routes', async () => {
    const key = await loadSigningKey(testPrivateKeyPem());
    const { partyId, id } = await register(api, admin);
    const { token: webhook } = await signWebhookToken(
      key,
      { registrationId: id, partyId, partyName: 'Admin', partyType: PartyType.Admin },
      { issuer: api.deps.config.JWT_ISSUER, audience: api.deps.config.JWT_AUDIENCE, now: api.clock.now() },
    );
    await expectForbidden(await send('/test/principal', { token: webhook }), /scope "webhook"/);
  });

  it('checks the scope whatever the party type (a User is not exempt)', async () => {
    const user = await tokenFor(PartyType.User, { permissions: [], mustChangePassword: true });
    await expectForbidden(await send('/test/needs-permission', { token: user }), /scope "change-password"/);
  });
});

describe('the order of the checks', () => {
  const invalid = JSON.stringify({ name: 'x', extra: true });

  it('authorizes before it validates: a forbidden caller with a bad body gets 403, not 400', async () => {
    const before = handled.body ?? 0;
    const company = await tokenFor(PartyType.PropertyManagementCompany);
    const noPermission = await tokenFor(PartyType.Admin, { permissions: ['Account.Read'] });
    for (const token of [company, noPermission]) {
      await expectForbidden(await send('/test/body', { method: 'POST', token, body: invalid }), /./);
      await expectForbidden(await send('/test/body', { method: 'POST', token, body: '{not json' }), /./);
      await expectForbidden(await send('/test/body', { method: 'POST', token }), /./);
      await expectForbidden(
        await send('/test/body', { method: 'POST', token, body: 'name=abc', type: 'text/plain' }),
        /./,
      );
    }
    expect(handled.body ?? 0).toBe(before);
  });

  it('authenticates first: no token and a bad body is 401', async () => {
    const response = await send('/test/body', { method: 'POST', body: invalid });
    expect(response.status).toBe(401);
    expect(await response.text()).toBe('');
    expect((await send('/test/body', { method: 'POST', body: 'x', type: 'text/plain' })).status).toBe(401);
  });

  it('validates the body of an allowed caller (400), then runs the handler', async () => {
    const response = await send('/test/body', { method: 'POST', token: admin, body: invalid });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      errors: { name: expect.any(Array), extra: expect.any(Array) },
    });
    const ok = await send('/test/body', {
      method: 'POST',
      token: admin,
      body: JSON.stringify({ name: 'abc' }),
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ route: 'body', name: 'abc' });
  });

  it('answers 401 on every guarded route without a valid token, and serves public ones', async () => {
    for (const [method, path] of [
      ['GET', '/test/admin-only'],
      ['GET', '/test/needs-permission'],
      ['PUT', '/test/change-password'],
      ['GET', '/test/principal'],
    ] as const) {
      const response = await send(path, { method, token: 'a.b.c' });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
    }
    expect((await send('/test/public')).status).toBe(200);
  });
});

describe('authorize()', () => {
  const principal = (changes: Partial<Principal>): Principal => ({
    accountId: 1,
    partyId: 1,
    partyName: 'P',
    partyType: PartyType.PropertyManagementCompany,
    email: 'p@example.com',
    scope: TokenScope.Platform,
    permissions: new Set(),
    ...changes,
  });
  const refusal = (p: Principal, auth: RouteAuth) => {
    try {
      authorize(p, auth);
      return undefined;
    } catch (error) {
      return (error as { status?: number; detail?: string }).detail;
    }
  };

  it('checks scope, then party type, then permission', () => {
    const auth: RouteAuth = { allow: [PartyType.Admin], permission: 'Account.Create' };
    expect(refusal(principal({ scope: TokenScope.ChangePassword }), auth)).toMatch(/scope/);
    expect(refusal(principal({}), auth)).toMatch(/Party type/);
    expect(refusal(principal({ partyType: PartyType.Admin }), auth)).toMatch(/Account\.Create/);
    expect(
      refusal(principal({ partyType: PartyType.Admin, permissions: new Set([0]) }), auth),
    ).toBeUndefined();
  });

  it('lets nobody through an empty allow list or an empty scope list', () => {
    expect(refusal(principal({ partyType: PartyType.User }), { allow: [] })).toMatch(/Party type User/);
    expect(refusal(principal({}), { allow: ALL_PARTY_TYPES, scopes: [] })).toMatch(/scope/);
  });
});
