import { loadSigningKey, signWebhookToken } from '@platform/crypto';
import { partyBucket } from '@platform/db';
import { PartyType } from '@platform/shared';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config';
import { base32Decode, totp } from '../features/mfa/totp';
import { expectProblem, expectUnauthenticated } from '../../tests/support/http';
import { ROUTES } from '../routes';
import {
  buildAccount,
  buildParty,
  enrolMfa,
  login,
  testPrivateKeyPem,
  useTestApi,
} from '../../tests/support/api';
import { GEN1_ROUTES } from './gen1-routes';
import {
  concretePath,
  gen1Login,
  getJson,
  postGen1Login,
  postGen1Refresh,
  type Gen1Tokens,
} from '../../tests/support/gen1';

const { api, world } = useTestApi({ world: true });
/** A Gen1 login of the PMC's full account. */
let gen1: Gen1Tokens;

beforeAll(async () => {
  gen1 = await gen1Login(api, world.pmc.full.email);
});
beforeEach(async () => {
  await api.deps.knex('rate_limit_hits').del();
});

const call = (method: string, path: string, token: string) =>
  api.fetch(path, {
    method: method.toUpperCase(),
    token,
    ...(['post', 'put', 'patch', 'delete'].includes(method) ? { json: {} } : {}),
  });

describe('Gen1 login', () => {
  it('answers Gen1 tokens: same key and issuer, the Gen1 audience and claim set', async () => {
    const response = await postGen1Login(api, { email: world.pmc.full.email, password: 'Test-Password-1!' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Gen1Tokens;
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(15 * 60);

    const gen2Header = decodeProtectedHeader(world.pmc.full.token);
    expect(decodeProtectedHeader(body.access_token)).toEqual({
      alg: 'RS256',
      typ: 'JWT',
      kid: gen2Header.kid,
    });
    const claims = decodeJwt(body.access_token);
    expect(claims).toEqual({
      sub: String(world.pmc.full.id),
      gen: 1,
      company_id: world.pmc.id,
      company_name: expect.any(String),
      company_type: PartyType.PropertyManagementCompany,
      email: world.pmc.full.email,
      scope: 'platform',
      permissions: decodeJwt(world.pmc.full.token).permissions,
      iss: api.deps.config.JWT_ISSUER,
      aud: 'platform-api-gen1',
      iat: expect.any(Number),
      exp: (claims.iat as number) + 15 * 60,
    });
    const refresh = decodeJwt(body.refresh_token);
    expect(refresh.aud).toBe('platform-api-gen1/refresh');
    expect(refresh.fam).toEqual(expect.any(String));
  });

  it('opens the Gen1 views', async () => {
    const company = await getJson(api, `/companies/${world.pmc.id}`, gen1.access_token);
    expect(company.id).toBe(world.pmc.id);
  });

  it('refuses a wrong password as Gen2 does (400, not saying which)', async () => {
    const response = await postGen1Login(api, { email: world.pmc.full.email, password: 'wrong-password' });
    await expectProblem(response, 400, { detail: 'The email or the password is wrong' });
  });

  it('refuses unknown and Gen2-spelled fields', async () => {
    const response = await postGen1Login(api, {
      email: world.pmc.full.email,
      password: 'Test-Password-1!',
      skipMultiFactorAuthentication: true,
    });
    await expectProblem(response, 400, { errors: { skipMultiFactorAuthentication: ['Unknown field'] } });
  });

  it('gives a must-change-password account only the change-password scope: Gen1 views refuse it (403)', async () => {
    const party = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany });
    const account = await buildAccount(api.deps, { partyId: party.id, mustChangePassword: true });
    const tokens = await gen1Login(api, account.email);
    expect(decodeJwt(tokens.access_token).scope).toBe('change-password');
    await expectProblem(await api.fetch(`/companies/${party.id}`, { token: tokens.access_token }), 403);
  });

  it('asks an account with multi-factor authentication for its second factor, with a Gen1 mfa token', async () => {
    const party = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany });
    const account = await buildAccount(api.deps, { partyId: party.id });
    const { accessToken } = await login(api, account.email);
    const { secret } = await enrolMfa(api, accessToken);
    const code = () => totp(base32Decode(secret), api.clock.now());
    api.clock.advance(30_000);

    const first = await postGen1Login(api, { email: account.email, password: 'Test-Password-1!' });
    const challenge = (await first.json()) as { mfa_required: boolean; mfa_token: string };
    expect(Object.keys(challenge).sort()).toEqual(['mfa_required', 'mfa_token']);
    expect(decodeJwt(challenge.mfa_token).aud).toBe('platform-api-gen1/mfa');
    // the Gen2 second step does not take it
    const crossed = await api.fetch('/api/auth/login/mfa', {
      method: 'POST',
      json: { mfaToken: challenge.mfa_token, code: code() },
    });
    await expectUnauthenticated(crossed);

    const second = await api.fetch('/auth/login/mfa', {
      method: 'POST',
      json: { mfa_token: challenge.mfa_token, code: code() },
    });
    expect(second.status, await second.clone().text()).toBe(200);
    const tokens = (await second.json()) as Gen1Tokens;
    expect(decodeJwt(tokens.access_token).aud).toBe('platform-api-gen1');
    await getJson(api, `/companies/${party.id}`, tokens.access_token);
  });
});

describe('Gen1 refresh', () => {
  it('exchanges a refresh token once for a new Gen1 pair of the same family', async () => {
    const first = await gen1Login(api, world.pmc.full.email);
    const response = await postGen1Refresh(api, first.refresh_token);
    expect(response.status).toBe(200);
    const second = (await response.json()) as Gen1Tokens;
    expect(decodeJwt(second.access_token).aud).toBe('platform-api-gen1');
    expect(decodeJwt(second.refresh_token).fam).toBe(decodeJwt(first.refresh_token).fam);
    await getJson(api, '/companies', second.access_token);
    // the family mechanism is the Gen2 one: its rows are in refresh_tokens
    const rows = await api.deps
      .knex('refresh_tokens')
      .where({ family_id: decodeJwt(first.refresh_token).fam as string })
      .orderBy('issued_at');
    expect(rows).toHaveLength(2);
    expect(rows.filter((row) => row.used_at !== null)).toHaveLength(1);
  });

  it('answers 401 to a used refresh token and revokes its whole family', async () => {
    const first = await gen1Login(api, world.pmc.full.email);
    const second = (await (await postGen1Refresh(api, first.refresh_token)).json()) as Gen1Tokens;
    await expectUnauthenticated(await postGen1Refresh(api, first.refresh_token));
    // the thief's replay ended the legitimate holder's session too
    await expectUnauthenticated(await postGen1Refresh(api, second.refresh_token));
  });

  it('does not take a Gen2 refresh token, and Gen2 does not take a Gen1 one; neither is spent', async () => {
    const gen2 = await login(api, world.pmc.full.email);
    const gen1Tokens = await gen1Login(api, world.pmc.full.email);
    await expectUnauthenticated(await postGen1Refresh(api, gen2.refreshToken));
    await expectUnauthenticated(
      await api.fetch('/api/auth/refresh', {
        method: 'POST',
        json: { refreshToken: gen1Tokens.refresh_token },
      }),
    );
    // both still work where they belong: the refusals touched no family
    expect(
      (await api.fetch('/api/auth/refresh', { method: 'POST', json: { refreshToken: gen2.refreshToken } }))
        .status,
    ).toBe(200);
    expect((await postGen1Refresh(api, gen1Tokens.refresh_token)).status).toBe(200);
  });

  it('refuses refresh tokens as bearer tokens', async () => {
    const tokens = await gen1Login(api, world.pmc.full.email);
    await expectUnauthenticated(await api.fetch('/companies', { token: tokens.refresh_token }));
  });

  it('ends with the account: a deleted account cannot refresh', async () => {
    const party = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany });
    const account = await buildAccount(api.deps, { partyId: party.id });
    const tokens = await gen1Login(api, account.email);
    await api.deps.knex('accounts').where({ id: account.id }).update({ deleted: api.clock.now() });
    await expectUnauthenticated(await postGen1Refresh(api, tokens.refresh_token));
  });
});

describe('token non-interoperability', () => {
  it('refuses a Gen1 access token on every Gen2 route (401)', async () => {
    const guarded = ROUTES.filter((route) => route.auth !== 'public');
    expect(guarded.length).toBeGreaterThan(50);
    for (const route of guarded) {
      const path = concretePath(route.path);
      const response = await call(route.method, path, gen1.access_token);
      expect(response.status, `${route.method.toUpperCase()} ${path}`).toBe(401);
      expect(await response.text()).toBe('');
    }
  });

  it('refuses a Gen2 access token on every Gen1 route (401)', async () => {
    const guarded = GEN1_ROUTES.filter((route) => route.auth !== 'public');
    expect(guarded.length).toBeGreaterThan(20);
    for (const route of guarded) {
      const path = concretePath(route.path);
      const response = await call(route.method, path, world.pmc.full.token);
      expect(response.status, `${route.method.toUpperCase()} ${path}`).toBe(401);
      await expectUnauthenticated(response);
    }
  });

  it('refuses an Admin Gen2 token and a service-signed webhook token on Gen1 views', async () => {
    const key = await loadSigningKey(testPrivateKeyPem());
    const [registration] = await api.deps
      .knex('webhook_registrations')
      .insert({
        party_id: world.pmc.id,
        bucket: partyBucket(api.deps.knex, world.pmc.id),
        target_url: 'http://127.0.0.1:9/hook',
        signing_secret: 'x',
      })
      .returning('id');
    const { token: webhookToken } = await signWebhookToken(
      key,
      {
        registrationId: registration.id as number,
        partyId: world.pmc.id,
        partyName: 'PMC',
        partyType: PartyType.PropertyManagementCompany,
      },
      { issuer: api.deps.config.JWT_ISSUER, audience: api.deps.config.JWT_AUDIENCE, now: api.clock.now() },
    );
    // the webhook token is good on Gen2 …
    expect((await api.fetch('/api/properties', { token: webhookToken })).status).toBe(200);
    // … and on no Gen1 view
    for (const token of [webhookToken, world.admin.full.token]) {
      await expectUnauthenticated(await api.fetch('/companies', { token }));
      await expectUnauthenticated(await api.fetch('/orders', { token }));
    }
  });

  it('the Gen1 and Gen2 login paths are apart: a Gen2 login is not a Gen1 one', async () => {
    const gen2 = await login(api, world.pmc.full.email);
    expect(decodeJwt(gen2.accessToken).aud).toBe(api.deps.config.JWT_AUDIENCE);
    await expectUnauthenticated(await api.fetch('/companies', { token: gen2.accessToken }));
    expect((await api.fetch('/api/parties', { token: gen1.access_token })).status).toBe(401);
  });
});

describe('configuration', () => {
  const base = { DATABASE_URL: 'postgres://localhost/x' };

  it('defaults JWT_GEN1_AUDIENCE to platform-api-gen1', () => {
    expect(loadConfig(base).JWT_GEN1_AUDIENCE).toBe('platform-api-gen1');
  });

  it('refuses a Gen1 audience that is, or collides with, a Gen2 one', () => {
    for (const JWT_GEN1_AUDIENCE of [
      'platform-api-gen2',
      'platform-api-gen2/refresh',
      'platform-api-gen2/mfa',
    ]) {
      expect(() => loadConfig({ ...base, JWT_GEN1_AUDIENCE })).toThrow(/JWT_GEN1_AUDIENCE: must differ/);
    }
    expect(() => loadConfig({ ...base, JWT_AUDIENCE: 'x/refresh', JWT_GEN1_AUDIENCE: 'x' })).toThrow(
      /JWT_GEN1_AUDIENCE/,
    );
  });
});
