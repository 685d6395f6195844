import { generatePrivateKeyPem, loadSigningKey } from '@platform/crypto';
import { decodePermissions, encodePermissions, PartyType, permissionByName } from '@platform/shared';
import { decodeJwt, SignJWT } from 'jose';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  buildAccount,
  buildParty,
  login,
  TEST_PASSWORD,
  testPrivateKeyPem,
  useTestApi,
} from '../../../tests/support/api';
import { writableCounts } from '../../../tests/support/http';
import { LOGIN_PER_ACCOUNT, LOGIN_PER_ADDRESS } from './auth-service';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

const { api } = useTestApi();
let party: { id: number; name: string };
let email: string;
beforeAll(async () => {
  party = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany, name: 'Acme' });
  ({ email } = await buildAccount(api.deps, { partyId: party.id }));
});
beforeEach(async () => {
  api.clock.set(new Date());
  await api.deps.knex('rate_limit_hits').del();
});

type Tokens = { accessToken: string; refreshToken: string };

const postLogin = (body: unknown) => api.fetch('/api/auth/login', { method: 'POST', json: body });
const postRefresh = (refreshToken: string) =>
  api.fetch('/api/auth/refresh', { method: 'POST', json: { refreshToken } });
const myself = (accessToken: string) => api.fetch('/api/accounts/myself', { token: accessToken });

async function newAccount(
  options: { type?: PartyType; permissions?: Parameters<typeof buildAccount>[1]['permissions'] } = {},
) {
  const owner = await buildParty(api.deps, { type: options.type ?? PartyType.PropertyManagementCompany });
  return buildAccount(api.deps, { partyId: owner.id, permissions: options.permissions ?? 'all' });
}

/** A 401 as the API answers it: no body, `WWW-Authenticate`. */
async function expectUnauthenticated(response: Response) {
  expect(response.status).toBe(401);
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
  expect(await response.text()).toBe('');
}

/** The ProblemDetails of `response`, without its per-request trace id. */
async function problem(response: Response, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const { traceId, ...body } = (await response.json()) as Record<string, unknown>;
  expect(traceId).toEqual(expect.any(String));
  expect(body).toMatchObject({ type: expect.any(String), title: expect.any(String), status });
  return body;
}

describe('login', () => {
  it('answers 200 { accessToken, refreshToken } that open the API', async () => {
    const response = await postLogin({ email, password: TEST_PASSWORD });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const tokens = (await response.json()) as Tokens;
    expect(Object.keys(tokens).sort()).toEqual(['accessToken', 'refreshToken']);
    expect(tokens.accessToken).not.toBe(tokens.refreshToken);
    const me = await myself(tokens.accessToken);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ email });
  });

  it('starts a new token family at every login', async () => {
    const first = decodeJwt((await login(api, email)).refreshToken);
    const second = decodeJwt((await login(api, email)).refreshToken);
    expect(first.fam).toEqual(expect.any(String));
    expect(first.fam).not.toBe(second.fam);
    expect(first.jti).not.toBe(second.jti);
  });

  it('answers the same 400 for a wrong password and an unknown email', async () => {
    const wrongPassword = await problem(await postLogin({ email, password: 'Wrong-Password-1!' }), 400);
    const unknownEmail = await problem(
      await postLogin({ email: 'nobody@example.com', password: TEST_PASSWORD }),
      400,
    );
    expect(unknownEmail).toEqual(wrongPassword);
    expect(wrongPassword.detail).not.toMatch(/email does not exist|unknown|no account/i);
  });

  it('answers that same 400 for an account without a password', async () => {
    const account = await newAccount();
    await api.deps.knex('accounts').where({ id: account.id }).update({ password_hash: null });
    const noPassword = await problem(await postLogin({ email: account.email, password: TEST_PASSWORD }), 400);
    const wrongPassword = await problem(await postLogin({ email, password: 'Wrong-Password-1!' }), 400);
    expect(noPassword).toEqual(wrongPassword);
  });

  it('refuses a deleted account, and an account of a deleted party, with that same 400', async () => {
    const expected = await problem(await postLogin({ email, password: 'Wrong-Password-1!' }), 400);

    const deletedAccount = await newAccount();
    await login(api, deletedAccount.email);
    await api.deps.knex('accounts').where({ id: deletedAccount.id }).update({ deleted: api.clock.now() });
    expect(
      await problem(await postLogin({ email: deletedAccount.email, password: TEST_PASSWORD }), 400),
    ).toEqual(expected);

    const ofDeletedParty = await newAccount();
    await login(api, ofDeletedParty.email);
    await api.deps.knex('parties').where({ id: ofDeletedParty.partyId }).update({ deleted: api.clock.now() });
    expect(
      await problem(await postLogin({ email: ofDeletedParty.email, password: TEST_PASSWORD }), 400),
    ).toEqual(expected);
  });

  it('logs into the live account when a deleted one had the same email', async () => {
    const old = await newAccount();
    await api.deps.knex('accounts').where({ id: old.id }).update({ deleted: api.clock.now() });
    const owner = await buildParty(api.deps, { type: PartyType.Contractor });
    const live = await buildAccount(api.deps, { partyId: owner.id, email: old.email });
    expect(decodeJwt((await login(api, old.email)).accessToken).sub).toBe(String(live.id));
  });

  it('matches the email case-insensitively and ignores surrounding blanks', async () => {
    const owner = await buildParty(api.deps, { type: PartyType.Contractor });
    const account = await buildAccount(api.deps, { partyId: owner.id, email: 'Mixed.Case@Example.COM' });
    for (const typed of ['mixed.case@example.com', 'MIXED.CASE@EXAMPLE.COM', '  Mixed.Case@example.com ']) {
      const tokens = await login(api, typed);
      expect(decodeJwt(tokens.accessToken)).toMatchObject({ sub: String(account.id), email: account.email });
    }
  });

  it('gives an account flagged must-change-password only the change-password scope', async () => {
    const owner = await buildParty(api.deps, { type: PartyType.Contractor });
    const account = await buildAccount(api.deps, { partyId: owner.id, mustChangePassword: true });
    const { accessToken } = await login(api, account.email);
    expect(decodeJwt(accessToken).scope).toBe('change-password');
    expect((await myself(accessToken)).status).toBe(403);
  });

  it('refuses a body that is not a login request with a 400 naming the fields, writing nothing', async () => {
    const before = await writableCounts(api);
    const body = await problem(await postLogin({ email: '', password: 1 }), 400);
    expect(Object.keys(body.errors as object).sort()).toEqual(['email', 'password']);
    const unknown = await problem(await postLogin({ email, password: TEST_PASSWORD, rememberMe: true }), 400);
    expect(unknown.errors).toEqual({ rememberMe: ['Unknown field'] });
    // not even a rate-limit hit: a malformed request is no login attempt
    expect(await writableCounts(api)).toEqual(before);
  });
});

describe('login rate limit', () => {
  it('answers the 11th failed attempt for one email within the window 429 with Retry-After', async () => {
    expect(LOGIN_PER_ACCOUNT.limit).toBe(10);
    const account = await newAccount();
    // start just inside a fresh fixed window, so Retry-After is predictable
    const windowMs = LOGIN_PER_ACCOUNT.windowMs;
    api.clock.set(new Date(Math.ceil(Date.now() / windowMs) * windowMs + 1000));
    for (let attempt = 1; attempt <= 10; attempt++) {
      const response = await postLogin({ email: account.email, password: `Wrong-${attempt}` });
      expect(response.status, `attempt ${attempt}`).toBe(400);
    }
    api.clock.advance(60_000);
    const refused = await postLogin({ email: account.email, password: 'Wrong-11' });
    const body = await problem(refused, 429);
    expect(body).toMatchObject({
      title: expect.any(String),
      detail: expect.stringMatching(/LoginPerAccount/),
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBe(windowMs / 1000 - 61);

    // still refused, with the right password and in any case of the email; another email is not
    for (const typed of [account.email, account.email.toUpperCase()]) {
      expect((await postLogin({ email: typed, password: TEST_PASSWORD })).status).toBe(429);
    }
    expect((await postLogin({ email, password: TEST_PASSWORD })).status).toBe(200);

    // the window passing lets the account in again
    api.clock.advance(retryAfter * 1000 - 1000);
    expect((await postLogin({ email: account.email, password: TEST_PASSWORD })).status).toBe(429);
    api.clock.advance(1000);
    expect((await postLogin({ email: account.email, password: TEST_PASSWORD })).status).toBe(200);
  });

  it('counts failed attempts only: successful logins leave the budget alone', async () => {
    const account = await newAccount();
    for (let attempt = 1; attempt <= LOGIN_PER_ACCOUNT.limit + 5; attempt++) {
      const response = await postLogin({ email: account.email, password: TEST_PASSWORD });
      expect(response.status, `login ${attempt}`).toBe(200);
    }
    for (let attempt = 1; attempt <= LOGIN_PER_ACCOUNT.limit; attempt++) {
      const response = await postLogin({ email: account.email, password: 'Wrong-Password-1!' });
      expect(response.status, `failed attempt ${attempt}`).toBe(400);
    }
    expect((await postLogin({ email: account.email, password: 'Wrong-Password-1!' })).status).toBe(429);
  });

  it('limits one client address across emails', async () => {
    api.clock.set(new Date(Math.ceil(Date.now() / LOGIN_PER_ADDRESS.windowMs) * LOGIN_PER_ADDRESS.windowMs));
    for (let attempt = 1; attempt <= LOGIN_PER_ADDRESS.limit; attempt++) {
      const response = await postLogin({ email: `guess-${attempt}@example.com`, password: 'Wrong-Password' });
      expect(response.status, `attempt ${attempt}`).toBe(400);
    }
    const refused = await postLogin({ email, password: TEST_PASSWORD });
    const body = await problem(refused, 429);
    expect(body.detail).toMatch(/LoginPerAddress/);
    expect(Number(refused.headers.get('retry-after'))).toBe(LOGIN_PER_ADDRESS.windowMs / 1000);
  });
});

describe('refresh', () => {
  it('exchanges a refresh token for a new pair whose access token works', async () => {
    const first = await login(api, email);
    api.clock.advance(1000);
    const response = await postRefresh(first.refreshToken);
    expect(response.status).toBe(200);
    const second = (await response.json()) as Tokens;
    expect(Object.keys(second).sort()).toEqual(['accessToken', 'refreshToken']);
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(decodeJwt(second.refreshToken).fam).toBe(decodeJwt(first.refreshToken).fam);
    expect((await myself(second.accessToken)).status).toBe(200);
    // and the chain goes on
    const third = await postRefresh(second.refreshToken);
    expect(third.status).toBe(200);
  });

  it('refreshes after the access token expired, until the refresh token expires (30 days)', async () => {
    const first = await login(api, email);
    api.clock.advance(16 * MINUTE);
    await expectUnauthenticated(await myself(first.accessToken));
    const second = (await (await postRefresh(first.refreshToken)).json()) as Tokens;
    expect((await myself(second.accessToken)).status).toBe(200);

    api.clock.advance(30 * DAY - 1000);
    expect((await postRefresh(second.refreshToken)).status).toBe(200);

    const third = await login(api, email);
    api.clock.advance(30 * DAY);
    await expectUnauthenticated(await postRefresh(third.refreshToken));
  });

  it('answers 401 to a used refresh token and revokes its whole family, not other families', async () => {
    const stolen = await login(api, email);
    const otherLogin = await login(api, email);
    const next = (await (await postRefresh(stolen.refreshToken)).json()) as Tokens;

    // the replay fails …
    await expectUnauthenticated(await postRefresh(stolen.refreshToken));
    // … and the token issued from it, never used, is revoked with the family
    await expectUnauthenticated(await postRefresh(next.refreshToken));
    const family = decodeJwt(stolen.refreshToken).fam as string;
    const rows = await api.deps.knex('refresh_tokens').where({ family_id: family });
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.revoked_at).not.toBeNull();

    // another login's family is unaffected
    const response = await postRefresh(otherLogin.refreshToken);
    expect(response.status).toBe(200);
    const other = (await response.json()) as Tokens;
    expect((await postRefresh(other.refreshToken)).status).toBe(200);
  });

  it('revokes the family when a token descended from the login is replayed further down', async () => {
    const first = await login(api, email);
    const second = (await (await postRefresh(first.refreshToken)).json()) as Tokens;
    const third = (await (await postRefresh(second.refreshToken)).json()) as Tokens;
    await expectUnauthenticated(await postRefresh(second.refreshToken));
    await expectUnauthenticated(await postRefresh(third.refreshToken));
  });

  it('answers 401 to garbage, to an access token and to a token the API did not sign', async () => {
    const tokens = await login(api, email);
    for (const token of ['garbage', 'a.b.c', `${tokens.refreshToken}x`, tokens.refreshToken.slice(0, -5)]) {
      await expectUnauthenticated(await postRefresh(token));
    }
    await expectUnauthenticated(await postRefresh(tokens.accessToken));

    const payload = decodeJwt(tokens.refreshToken);
    const otherKey = await loadSigningKey(generatePrivateKeyPem());
    const forged = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: otherKey.kid })
      .sign(otherKey.privateKey);
    await expectUnauthenticated(await postRefresh(forged));
    // the original is still good: none of the above touched it
    expect((await postRefresh(tokens.refreshToken)).status).toBe(200);
  });

  it('answers 401 to a well-signed refresh token the API never issued', async () => {
    const tokens = await login(api, email);
    const payload = decodeJwt(tokens.refreshToken);
    const key = await loadSigningKey(testPrivateKeyPem());
    const sign = (changes: Record<string, unknown>) =>
      new SignJWT({ ...payload, ...changes })
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
        .sign(key.privateKey);
    await expectUnauthenticated(await postRefresh(await sign({ jti: crypto.randomUUID() })));
    await expectUnauthenticated(await postRefresh(await sign({ jti: 'not-a-uuid' })));
    await expectUnauthenticated(await postRefresh(await sign({ fam: crypto.randomUUID() })));
    const other = await newAccount();
    await expectUnauthenticated(await postRefresh(await sign({ sub: String(other.id) })));
  });

  it('recomputes the claims: permissions, scope and party name as they are now', async () => {
    const account = await newAccount({ permissions: ['Account.Read', 'Property.Read'] });
    const first = await login(api, account.email);
    expect(decodePermissions(decodeJwt(first.accessToken).permissions as string)).toEqual(
      new Set([permissionByName('Account.Read').id, permissionByName('Property.Read').id]),
    );

    await api.deps.knex('account_group_permissions').where({ group_id: account.groupId }).del();
    await api.deps.knex('account_group_permissions').insert(
      (['Property.Update', 'Webhook.Delete'] as const).map((name) => ({
        group_id: account.groupId,
        permission_id: permissionByName(name).id,
      })),
    );
    await api.deps.knex('parties').where({ id: account.partyId }).update({ name: 'Renamed Ltd' });
    await api.deps.knex('accounts').where({ id: account.id }).update({ must_change_password: true });

    const second = (await (await postRefresh(first.refreshToken)).json()) as Tokens;
    expect(decodeJwt(second.accessToken)).toMatchObject({
      permissions: encodePermissions([
        permissionByName('Property.Update').id,
        permissionByName('Webhook.Delete').id,
      ]),
      partyName: 'Renamed Ltd',
      scope: 'change-password',
    });
  });

  it('grants nothing from a deleted account group', async () => {
    const account = await newAccount({ permissions: 'all' });
    const first = await login(api, account.email);
    expect(decodePermissions(decodeJwt(first.accessToken).permissions as string).size).toBeGreaterThan(0);
    await api.deps.knex('account_groups').where({ id: account.groupId }).update({ deleted: api.clock.now() });
    const second = (await (await postRefresh(first.refreshToken)).json()) as Tokens;
    expect(decodeJwt(second.accessToken).permissions).toBe(encodePermissions([]));
  });

  it('answers 401 once the account or its party is deleted', async () => {
    const account = await newAccount();
    const tokens = await login(api, account.email);
    await api.deps.knex('accounts').where({ id: account.id }).update({ deleted: api.clock.now() });
    await expectUnauthenticated(await postRefresh(tokens.refreshToken));

    const ofParty = await newAccount();
    const partyTokens = await login(api, ofParty.email);
    await api.deps.knex('parties').where({ id: ofParty.partyId }).update({ deleted: api.clock.now() });
    await expectUnauthenticated(await postRefresh(partyTokens.refreshToken));
  });

  it('lets exactly one of two concurrent refreshes of one token succeed', async () => {
    for (let round = 0; round < 5; round++) {
      const tokens = await login(api, email);
      const responses = await Promise.all([
        postRefresh(tokens.refreshToken),
        postRefresh(tokens.refreshToken),
      ]);
      expect(responses.map((r) => r.status).sort()).toEqual([200, 401]);
      await Promise.all(responses.map((r) => r.text()));
    }
  });

  it('refuses a request that is not a refresh request with a 400 naming the fields, writing nothing', async () => {
    const before = await writableCounts(api);
    const response = await api.fetch('/api/auth/refresh', { method: 'POST', json: { token: 'x' } });
    const body = await problem(response, 400);
    expect(Object.keys(body.errors as object).sort()).toEqual(['refreshToken', 'token']);
    const empty = await problem(await postRefresh(''), 400);
    expect(Object.keys(empty.errors as object)).toEqual(['refreshToken']);
    expect(await writableCounts(api)).toEqual(before);
  });
});
