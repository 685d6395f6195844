/**
 * Auth attacks: refresh-token replay and forged refresh tokens, webhook tokens out of
 * bounds, every resource read and written across parties, and brute force of
 * logins, recovery codes and second factors. Several are also proven, in more detail, beside the
 * code they attack (auth/tokens.test.ts, auth/webhook-token.test.ts, features/auth/auth.test.ts,
 * features/password-recovery/password-recovery.test.ts, features/mfa/mfa.test.ts). Forged and misused access tokens
 * are sent to every operation of the API in forged-tokens.test.ts.
 */
import { createPublicKey } from 'node:crypto';
import { generatePrivateKeyPem, loadSigningKey, type SigningKey } from '@platform/crypto';
import { PartyType, TokenScope } from '@platform/shared';
import { decodeJwt, SignJWT, UnsecuredJWT, type JWTPayload } from 'jose';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LOGIN_PER_ACCOUNT, LOGIN_PER_ADDRESS } from '../../src/features/auth/auth-service';
import { MFA_PER_ACCOUNT } from '../../src/features/mfa/mfa-service';
import { base32Decode, totp } from '../../src/features/mfa/totp';
import { MAX_RECOVERY_FAILURES } from '../../src/features/password-recovery/password-recovery-service';
import { gen1TokenService } from '../../src/gen1/gen1-tokens';
import { allTableCounts, expectProblem, expectUnauthenticated, readJson } from '../support/http';
import { RESOURCES } from '../../src/resources/index';
import { resourceRoutes } from '../../src/resources/resource-routes';
import { SAMPLE_CREATE, uploadForm, worldParties } from '../support/sample-writes';
import type { ResourceDefinition } from '../../src/resources/resource';
import {
  buildAccount,
  buildParty,
  login,
  TEST_PASSWORD,
  testPrivateKeyPem,
  type WorldParty,
  useTestApi,
  enrolMfa,
} from '../support/api';
import { enableConferencesOfPmcs, liveWebhookToken, tokenMaker } from './security-test-support';

const { api, world } = useTestApi({ world: true });
let key: SigningKey;
/** Claims of a real access token of the PMC's full account, as a template for minted ones. */
let claims: JWTPayload;

beforeAll(async () => {
  key = await loadSigningKey(testPrivateKeyPem());
  claims = decodeJwt(world.pmc.full.token);
  await enableConferencesOfPmcs(api, world);
});
beforeEach(async () => {
  api.clock.set(new Date());
  await api.deps.knex('rate_limit_hits').del();
});

const { nowSeconds, mint } = tokenMaker(() => ({ api, claims, key }));

describe('refresh tokens', () => {
  const refresh = (refreshToken: string) =>
    api.fetch('/api/auth/refresh', { method: 'POST', json: { refreshToken } });
  const pair = async (response: Response) => {
    return readJson<{ accessToken: string; refreshToken: string }>(response);
  };

  it('used twice: the replay is a 401 and revokes every descendant of that login, not other logins', async () => {
    const email = world.broker.full.email;
    const first = await login(api, email);
    const unrelated = await login(api, email);
    const second = await pair(await refresh(first.refreshToken));
    const third = await pair(await refresh(second.refreshToken));

    await expectUnauthenticated(await refresh(first.refreshToken));
    // its descendants, used and unused, are revoked with it
    await expectUnauthenticated(await refresh(second.refreshToken));
    await expectUnauthenticated(await refresh(third.refreshToken));
    const family = decodeJwt(first.refreshToken).fam as string;
    const rows = await api.deps.knex('refresh_tokens').where({ family_id: family }).select('revoked_at');
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row.revoked_at).not.toBeNull();
    // another login of the same account goes on
    await pair(await refresh(unrelated.refreshToken));
  });

  it('a forged one (alg none, HS256, another key, another audience, a Gen1 one, expired) is a 401 and revokes nothing', async () => {
    const { refreshToken } = await login(api, world.broker.full.email);
    const payload = decodeJwt(refreshToken);
    const publicPem = createPublicKey(testPrivateKeyPem()).export({ type: 'spki', format: 'pem' }).toString();
    const gen1 = gen1TokenService(api.deps.tokens, api.deps.config.JWT_GEN1_AUDIENCE);
    const forged = [
      new UnsecuredJWT(payload).encode(),
      await new SignJWT(payload)
        .setProtectedHeader({ alg: 'HS256', kid: key.kid })
        .sign(new TextEncoder().encode(publicPem)),
      await mint(payload, await loadSigningKey(generatePrivateKeyPem())),
      await mint({ ...payload, aud: api.deps.config.JWT_AUDIENCE }),
      (await gen1.signRefreshToken(world.broker.full.id, payload.fam as string)).token,
      await mint({ ...payload, iat: nowSeconds() - 31 * 24 * 3600, exp: nowSeconds() - 24 * 3600 }),
    ];
    for (const token of forged) await expectUnauthenticated(await refresh(token));
    // none of them counted as a replay of the real one
    await pair(await refresh(refreshToken));
  });
});

const webhookToken = (party: WorldParty, partyId = party.id) => liveWebhookToken(api, key, party, partyId);

const pathOf = (path: string, id: number) => path.replace(/:\w+/g, String(id));

describe('a webhook-scoped token', () => {
  it('claiming a party its registration does not belong to, or of a deleted registration, is a 401', async () => {
    const claimed = await webhookToken(world.otherPmc, world.pmc.id);
    await expectUnauthenticated(await api.fetch('/api/properties', { token: claimed.token }));
    const gone = await webhookToken(world.otherPmc);
    expect((await api.fetch('/api/properties', { token: gone.token })).status).toBe(200);
    await api.deps.knex('webhook_registrations').where({ id: gone.id }).update({ deleted: new Date() });
    await expectUnauthenticated(await api.fetch('/api/properties', { token: gone.token }));
  });
});

// ---------------------------------------------------------------------------------------------
// Cross-party reads and writes of every resource

const created = new Map<string, Promise<number>>();

/** The PMC's row of resource `name`, created once through the API. */
function need(name: string): Promise<number> {
  let id = created.get(name);
  if (!id) {
    id = (async () => {
      const def = RESOURCES.find((resource) => resource.name === name);
      const make = SAMPLE_CREATE[name];
      if (!def || !make) throw new Error(`no way to create a ${name}`);
      const body = await make(need, 'main', worldParties(world));
      const response = await api.fetch(def.path, {
        method: 'POST',
        token: world.pmc.full.token,
        ...(def.name === 'File' ? { body: uploadForm(body) } : { json: body }),
      });
      expect(response.status, `create ${name}: ${await response.clone().text()}`).toBe(200);
      return ((await response.json()) as { id: number }).id;
    })();
    created.set(name, id);
  }
  return id;
}

/** The ids a list, search or batch answer holds. */
async function idsIn(response: Response): Promise<number[]> {
  expect(response.status, await response.clone().text()).toBe(200);
  const body = (await response.json()) as { items: { id: number }[] } | { id: number }[];
  return (Array.isArray(body) ? body : body.items).map((item) => item.id);
}

/** Reads of `def` as `token` (a caller of another party): the row is nowhere, and 404 by id. */
async function expectInvisible(def: ResourceDefinition, id: number, token: string): Promise<void> {
  expect(await idsIn(await api.fetch(`${def.path}?PageSize=100`, { token }))).not.toContain(id);
  const search = await api.fetch(`${def.path}/search?PageSize=100`, {
    method: 'POST',
    token,
    json: { filters: [] },
  });
  expect(await idsIn(search)).not.toContain(id);
  expect(
    await idsIn(await api.fetch(`${def.path}/batch`, { method: 'POST', token, json: { ids: [id] } })),
  ).toEqual([]);
}

describe('every resource, read and written by another PMC, answers 404 and changes nothing', () => {
  it('covers every resource', () => {
    expect(Object.keys(SAMPLE_CREATE).sort()).toEqual(RESOURCES.map((def) => def.name).sort());
  });

  it.each(RESOURCES.map((def) => [def.name, def] as const))('%s', async (name, def) => {
    const id = await need(name);
    const owner = world.pmc.full.token;
    const intruder = world.otherPmc.full.token;
    const intruderHook = (await webhookToken(world.otherPmc)).token;
    // the control: the owner sees it everywhere
    expect((await api.fetch(`${def.path}/${id}`, { token: owner })).status).toBe(200);
    expect(
      await idsIn(
        await api.fetch(`${def.path}/batch`, { method: 'POST', token: owner, json: { ids: [id] } }),
      ),
    ).toEqual([id]);

    const row = await api.deps.knex(def.table).where({ id }).first();
    const before = await allTableCounts(api);
    await expectInvisible(def, id, intruder);
    await expectInvisible(def, id, intruderHook);
    // every operation on the row by id: read, update, delete and the resource's own (a download)
    const byId = resourceRoutes(def).filter((route) => route.path.includes(':id'));
    expect(byId.length).toBeGreaterThanOrEqual(def.deletable === false ? 2 : 3);
    for (const route of byId) {
      const init = { method: route.method.toUpperCase(), ...(route.body ? { json: {} } : {}) };
      const response = await api.fetch(pathOf(route.path, id), { ...init, token: intruder });
      await expectProblem(response, 404);
      const scopes = route.auth === 'public' ? [] : (route.auth.scopes ?? [TokenScope.Platform]);
      const hooked = await api.fetch(pathOf(route.path, id), { ...init, token: intruderHook });
      await expectProblem(hooked, scopes.includes(TokenScope.Webhook) ? 404 : 403);
    }
    expect(await allTableCounts(api)).toEqual(before);
    expect(await api.deps.knex(def.table).where({ id }).first()).toEqual(row);
  });
});

describe('accounts, contact details and webhook registrations of another PMC', () => {
  it('answer 404 to reads and writes by id, changing nothing', async () => {
    const owner = world.pmc.full.token;
    const intruder = world.otherPmc.full.token;
    const registration = await api.fetch('/api/webhook-registrations', {
      method: 'POST',
      token: owner,
      json: {
        targetUrl: 'https://hooks.example.com/pmc',
        enabledEvents: [{ entityName: 'Property', type: 1 }],
        targetAuthorization: { type: 0 },
      },
    });
    const registrationId = ((await registration.json()) as { id: number }).id;
    const detail = await api.fetch('/api/account-contact-details', {
      method: 'POST',
      token: owner,
      json: { accountId: world.pmc.full.id, type: 'phone', value: '+49 30 1234567' },
    });
    expect(detail.status, await detail.clone().text()).toBe(200);
    const detailId = ((await detail.json()) as { id: number }).id;
    const account = world.pmc.bare.id;
    const before = await allTableCounts(api);
    const attempts: [string, string, unknown?][] = [
      ['GET', `/api/accounts/${account}`],
      ['PATCH', `/api/accounts/${account}`, { firstName: 'Mallory' }],
      ['DELETE', `/api/accounts/${account}`],
      [
        'PUT',
        `/api/accounts/${account}/password`,
        { currentPassword: TEST_PASSWORD, newPassword: 'Hijacked-Password-9!' },
      ],
      ['GET', `/api/accounts/${account}/party`],
      ['GET', `/api/accounts/${account}/accessible-accounts`],
      ['GET', `/api/accounts/${account}/account-contact-details`],
      ['POST', `/api/accounts/${account}/activation-message`],
      ['GET', `/api/account-contact-details/${detailId}`],
      ['GET', `/api/account-groups/${world.pmc.full.id}/permission-mappings`],
      ['GET', `/api/webhook-registrations/${registrationId}`],
      ['PATCH', `/api/webhook-registrations/${registrationId}`, { targetUrl: 'https://evil.example.com/' }],
      ['DELETE', `/api/webhook-registrations/${registrationId}`],
    ];
    for (const [method, path, json] of attempts) {
      await expectProblem(await api.fetch(path, { method, token: intruder, ...(json ? { json } : {}) }), 404);
    }
    // batch reads and bulk updates leave them out
    const batch = await api.fetch('/api/accounts/batch', {
      method: 'POST',
      token: intruder,
      json: { ids: [account] },
    });
    expect(await idsIn(batch)).toEqual([]);
    const bulk = await api.fetch('/api/accounts/batch', {
      method: 'PATCH',
      token: intruder,
      json: { ids: [account], patch: { firstName: 'Mallory' } },
    });
    expect(bulk.status).toBe(200);
    expect(await bulk.json()).toEqual([]);
    const bulkDetails = await api.fetch('/api/account-contact-details/batch', {
      method: 'PATCH',
      token: intruder,
      json: { ids: [detailId], patch: { label: 'Mallory' } },
    });
    expect(await bulkDetails.json()).toEqual([]);
    expect(await allTableCounts(api)).toEqual(before);
    const stored = await api.deps.knex('accounts').where({ id: account }).first('first_name', 'deleted');
    expect(stored).toEqual({ first_name: null, deleted: null });
  });
});

// ---------------------------------------------------------------------------------------------
// Brute force

const postLogin = (email: string, password: string) =>
  api.fetch('/api/auth/login', { method: 'POST', json: { email, password } });

/** Starts the test clock at the beginning of a fixed window of `windowMs`, for exact Retry-After. */
function startOfWindow(windowMs: number): void {
  api.clock.set(new Date(Math.ceil(Date.now() / windowMs) * windowMs + 1000));
}

describe('brute force', () => {
  it('of one account’s password: the 11th failed login within 15 minutes is a 429, even with the right password', async () => {
    const party = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany });
    const victim = await buildAccount(api.deps, { partyId: party.id });
    startOfWindow(LOGIN_PER_ACCOUNT.windowMs);
    for (let attempt = 1; attempt <= LOGIN_PER_ACCOUNT.limit; attempt++) {
      await expectProblem(await postLogin(victim.email, `Guess-${attempt}`), 400);
    }
    const refused = await postLogin(victim.email, TEST_PASSWORD);
    await expectProblem(refused, 429, { detail: /LoginPerAccount/ });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    await expectProblem(await postLogin(victim.email.toUpperCase(), TEST_PASSWORD), 429);
  });

  it('across accounts from one address: the 101st failed login within 15 minutes is a 429', async () => {
    startOfWindow(LOGIN_PER_ADDRESS.windowMs);
    for (let start = 1; start <= LOGIN_PER_ADDRESS.limit; start += 10) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => postLogin(`guess-${start + i}@example.com`, 'Guess-Password-1')),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(400));
    }
    await expectProblem(await postLogin(world.pmc.full.email, TEST_PASSWORD), 429, {
      detail: /LoginPerAddress/,
    });
  });

  it('of recovery codes: the 5th wrong code blocks recovery (403), even for the right code and for unknown emails', async () => {
    const party = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany });
    const victim = await buildAccount(api.deps, { partyId: party.id });
    const asked = await api.fetch('/api/auth/recover-password', {
      method: 'POST',
      json: { email: victim.email },
    });
    expect(asked.status).toBe(200);
    const mail = await api.deps
      .knex('mail_outbox')
      .where({ to_address: victim.email })
      .orderBy('id', 'desc')
      .first('text_body');
    const code = /([A-Z2-9]{4}-[A-Z2-9]{4})/.exec(mail.text_body as string)?.[1];
    expect(code).toBeDefined();
    const change = (email: string, recoveryCode: string) =>
      api.fetch('/api/auth/change-password-with-recovery-code', {
        method: 'PUT',
        json: { email, password: 'New-Password-77!', recoveryCode },
      });
    for (let strike = 1; strike < MAX_RECOVERY_FAILURES; strike++) {
      await expectProblem(await change(victim.email, 'ZZZZ-ZZZZ'), 400);
    }
    await expectProblem(await change(victim.email, 'ZZZZ-ZZZZ'), 403, { detail: /blocked/ });
    await expectProblem(await change(victim.email, code!), 403, { detail: /blocked/ });
    expect((await login(api, victim.email)).accessToken).toBeTruthy();
    // an unknown email is blocked the same way, so blocks reveal no accounts
    for (let strike = 1; strike < MAX_RECOVERY_FAILURES; strike++) {
      await expectProblem(await change('nobody@example.com', 'ZZZZ-ZZZZ'), 400);
    }
    await expectProblem(await change('nobody@example.com', 'ZZZZ-ZZZZ'), 403, { detail: /blocked/ });
  });

  it('of second factors: the 6th wrong code within 15 minutes is a 429, even for the right one', async () => {
    const party = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany });
    const victim = await buildAccount(api.deps, { partyId: party.id });
    const { accessToken } = await login(api, victim.email);
    const { secret } = await enrolMfa(api, accessToken);
    api.clock.advance(60_000);
    const challenge = (await (await postLogin(victim.email, TEST_PASSWORD)).json()) as { mfaToken: string };
    const second = (code: string) =>
      api.fetch('/api/auth/login/mfa', { method: 'POST', json: { mfaToken: challenge.mfaToken, code } });
    const right = totp(base32Decode(secret), api.clock.now());
    const wrong = right === '000000' ? '111111' : '000000';
    for (let attempt = 1; attempt <= MFA_PER_ACCOUNT.limit; attempt++)
      await expectProblem(await second(wrong), 400);
    await expectProblem(await second(right), 429, { detail: /MfaPerAccount/ });
  });
});
