import { PartyType, TokenScope } from '@platform/shared';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import { MFA_TOKEN_TTL_MS } from '../../auth/tokens';
import { expectProblem, expectUnauthenticated, readJson } from '../../../tests/support/http';
import {
  buildAccount,
  buildParty,
  expectAccessRules,
  login,
  TEST_PASSWORD,
  useTestApi,
} from '../../../tests/support/api';
import { MFA_PER_ACCOUNT } from './mfa-service';
import { base32Decode, totp } from './totp';

const STEP_MS = 30_000;
const ENROL = '/api/accounts/myself/mfa';
const CONFIRM = '/api/accounts/myself/mfa/confirm';

const { api, world } = useTestApi({ world: true });
beforeEach(async () => {
  // a second into the next 30-second step, so "the current code" stays current during a test
  // (and the clock never goes back behind tokens issued earlier)
  api.clock.set(new Date(Math.ceil(Date.now() / STEP_MS) * STEP_MS + 1000));
  await api.deps.knex('rate_limit_hits').del();
});

type Tokens = { accessToken: string; refreshToken: string };
interface Enrolled {
  id: number;
  email: string;
  secret: string;
  recoveryCodes: string[];
}

/** The authenticator app: the code of `secret` at the test clock, `steps` periods off. */
const codeOf = (secret: string, steps = 0) =>
  totp(base32Decode(secret), new Date(api.clock.now().getTime() + steps * STEP_MS));

/** Moves to the next time step, where a new code is current (a used one is never taken again). */
const nextStep = () => api.clock.advance(STEP_MS);

const postLogin = (body: unknown) => api.fetch('/api/auth/login', { method: 'POST', json: body });
const postLoginMfa = (body: unknown) => api.fetch('/api/auth/login/mfa', { method: 'POST', json: body });
const postRefresh = (refreshToken: string) =>
  api.fetch('/api/auth/refresh', { method: 'POST', json: { refreshToken } });
const myself = (token: string) => api.fetch('/api/accounts/myself', { token });
const enrol = (token: string) => api.fetch(ENROL, { method: 'POST', token });
const confirm = (token: string, body: unknown) => api.fetch(CONFIRM, { method: 'POST', token, json: body });
const disable = (token: string, body: unknown) => api.fetch(ENROL, { method: 'DELETE', token, json: body });

async function newAccount(type: PartyType = PartyType.PropertyManagementCompany) {
  const party = await buildParty(api.deps, { type });
  return buildAccount(api.deps, { partyId: party.id });
}

/** An account with MFA enabled (through the API), moved on to the next time step. */
async function enrolledAccount(type?: PartyType): Promise<Enrolled & { accessToken: string }> {
  const account = await newAccount(type);
  const { accessToken } = await login(api, account.email);
  const { secret } = (await (await enrol(accessToken)).json()) as { secret: string };
  const response = await confirm(accessToken, { code: codeOf(secret) });
  expect(response.status).toBe(200);
  const { recoveryCodes } = (await response.json()) as { recoveryCodes: string[] };
  nextStep();
  return { id: account.id, email: account.email, secret, recoveryCodes, accessToken };
}

/** The first login step of an enrolled account: its mfaToken. */
async function mfaTokenOf(email: string, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await postLogin({ email, password: TEST_PASSWORD, ...extra });
  expect(response.status).toBe(200);
  const body = (await response.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['mfaRequired', 'mfaToken']);
  expect(body.mfaRequired).toBe(true);
  return body.mfaToken as string;
}

/** Both login steps; the tokens. */
async function loginWithCode(email: string, code: string): Promise<Tokens> {
  const response = await postLoginMfa({ mfaToken: await mfaTokenOf(email), code });
  return readJson<Tokens>(response);
}

/** What any MFA request could write, to prove a refused one wrote nothing. */
async function mfaState(accountId: number) {
  const account = await api.deps
    .knex('accounts')
    .where({ id: accountId })
    .first('mfa_secret', 'mfa_enabled', 'mfa_last_used_step', 'last_modified');
  const count = async (table: string) =>
    Number((await api.deps.knex(table).count<{ count: string }[]>({ count: '*' }))[0]?.count);
  const [hits] = await api.deps.knex('rate_limit_hits').sum<{ sum: string | null }[]>({ sum: 'hits' });
  return {
    account,
    recoveryCodes: await api.deps
      .knex('mfa_recovery_codes')
      .where({ account_id: accountId })
      .orderBy('id')
      .select('code_hash', 'used_at'),
    mfaLoginTokens: await count('mfa_login_tokens'),
    refreshTokens: await count('refresh_tokens'),
    rateLimitHits: Number(hits?.sum ?? 0),
  };
}

describe('who may manage MFA', () => {
  it('every party type, for its own account', async () => {
    const allow = Object.values(PartyType);
    await expectAccessRules(api, world, { method: 'POST', path: ENROL, allow });
    await expectAccessRules(api, world, { method: 'POST', path: CONFIRM, body: { code: '000000' }, allow });
    await expectAccessRules(api, world, {
      method: 'DELETE',
      path: ENROL,
      body: { password: TEST_PASSWORD, code: '000000' },
      allow,
    });
  });

  it('not a change-password token, and not without a token', async () => {
    const party = await buildParty(api.deps, { type: PartyType.Contractor });
    const account = await buildAccount(api.deps, { partyId: party.id, mustChangePassword: true });
    const { accessToken } = await login(api, account.email);
    expect(decodeJwt(accessToken).scope).toBe(TokenScope.ChangePassword);
    const before = await mfaState(account.id);
    await expectProblem(await enrol(accessToken), 403);
    await expectProblem(await confirm(accessToken, { code: '123456' }), 403);
    await expectProblem(await disable(accessToken, { password: TEST_PASSWORD, code: '123456' }), 403);
    await expectUnauthenticated(await api.fetch(ENROL, { method: 'POST' }));
    await expectUnauthenticated(await api.fetch(CONFIRM, { method: 'POST', json: { code: '123456' } }));
    await expectUnauthenticated(
      await api.fetch(ENROL, { method: 'DELETE', json: { password: 'x', code: '1' } }),
    );
    expect(await mfaState(account.id)).toEqual(before);
  });
});

describe('enrolment', () => {
  it('answers a base32 secret and its otpauth URI, stored sealed and pending', async () => {
    const account = await newAccount(PartyType.User);
    const { accessToken } = await login(api, account.email);
    const response = await enrol(accessToken);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { secret: string; otpauthUri: string };
    expect(Object.keys(body).sort()).toEqual(['otpauthUri', 'secret']);
    expect(body.secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(body.otpauthUri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe(`/Property Platform:${account.email}`);
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      secret: body.secret,
      issuer: 'Property Platform',
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });

    const row = await api.deps.knex('accounts').where({ id: account.id }).first();
    expect(row.mfa_enabled).toBe(false);
    expect(row.mfa_secret).toMatch(/^v1\./);
    expect(row.mfa_secret).not.toContain(body.secret);
    expect(JSON.stringify(row)).not.toContain(body.secret);
    expect(api.deps.secrets.open(row.mfa_secret)).toBe(body.secret);

    // pending is not enabled: the account reads so, and logs in with its password alone
    expect(await (await myself(accessToken)).json()).toMatchObject({ multiFactorEnabled: false });
    expect(Object.keys(await login(api, account.email)).sort()).toEqual(['accessToken', 'refreshToken']);
  });

  it('replaces a pending secret when called again', async () => {
    const account = await newAccount();
    const { accessToken } = await login(api, account.email);
    const first = (await (await enrol(accessToken)).json()) as { secret: string };
    const second = (await (await enrol(accessToken)).json()) as { secret: string };
    expect(second.secret).not.toBe(first.secret);
    await expectProblem(await confirm(accessToken, { code: codeOf(first.secret) }), 400, {
      errors: { code: ['is wrong, expired or already used'] },
    });
    expect((await confirm(accessToken, { code: codeOf(second.secret) })).status).toBe(200);
  });

  it('confirms with a code: MFA enabled, ten recovery codes answered once and stored hashed', async () => {
    const account = await newAccount(PartyType.Admin);
    const { accessToken } = await login(api, account.email);
    const { secret } = (await (await enrol(accessToken)).json()) as { secret: string };
    // as apps display it, with a blank in the middle
    const code = codeOf(secret);
    const response = await confirm(accessToken, { code: `${code.slice(0, 3)} ${code.slice(3)}` });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { recoveryCodes: string[] };
    expect(Object.keys(body)).toEqual(['recoveryCodes']);
    expect(body.recoveryCodes).toHaveLength(10);
    expect(new Set(body.recoveryCodes).size).toBe(10);
    for (const recoveryCode of body.recoveryCodes)
      expect(recoveryCode).toMatch(/^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/);

    const rows = await api.deps.knex('mfa_recovery_codes').where({ account_id: account.id });
    expect(rows).toHaveLength(10);
    const stored = JSON.stringify(rows);
    for (const recoveryCode of body.recoveryCodes) {
      expect(stored).not.toContain(recoveryCode);
      expect(stored).not.toContain(recoveryCode.replace(/-/g, ''));
    }
    expect(rows.every((row) => row.used_at === null)).toBe(true);
    expect(await (await myself(accessToken)).json()).toMatchObject({ multiFactorEnabled: true });

    // enabled: neither a second confirmation nor a new enrolment (that would swap the factor)
    nextStep();
    await expectProblem(await confirm(accessToken, { code: codeOf(secret) }), 409);
    await expectProblem(await enrol(accessToken), 409, { detail: /already enabled/ });
    const row = await api.deps.knex('accounts').where({ id: account.id }).first();
    expect(api.deps.secrets.open(row.mfa_secret)).toBe(secret);
  });

  it('refuses a wrong code with a 400 naming the field, and writes nothing', async () => {
    const account = await newAccount();
    const { accessToken } = await login(api, account.email);
    const { secret } = (await (await enrol(accessToken)).json()) as { secret: string };
    const before = await mfaState(account.id);
    for (const wrong of [
      codeOf(secret, -2),
      codeOf(secret, 2),
      codeOf(secret) === '000000' ? '000001' : '000000',
    ]) {
      await expectProblem(await confirm(accessToken, { code: wrong }), 400, {
        errors: { code: ['is wrong, expired or already used'] },
      });
    }
    expect(await mfaState(account.id)).toEqual(before);
  });

  it('takes the codes of the step before and after (clock drift), and not the one it was confirmed with again', async () => {
    const account = await newAccount();
    const { accessToken } = await login(api, account.email);
    const { secret } = (await (await enrol(accessToken)).json()) as { secret: string };
    const code = codeOf(secret, -1);
    expect((await confirm(accessToken, { code })).status).toBe(200);
    // the same code at once for a login: a replay
    const mfaToken = await mfaTokenOf(account.email);
    await expectProblem(await postLoginMfa({ mfaToken, code }), 400, {
      errors: { code: [expect.any(String)] },
    });
    expect((await postLoginMfa({ mfaToken, code: codeOf(secret, 1) })).status).toBe(200);
  });

  it('answers 409 to a confirmation with nothing pending', async () => {
    const account = await newAccount();
    const { accessToken } = await login(api, account.email);
    const before = await mfaState(account.id);
    await expectProblem(await confirm(accessToken, { code: '123456' }), 409, {
      detail: /no enrolment to confirm/,
    });
    expect(await mfaState(account.id)).toEqual(before);
  });

  it('refuses bad input with a 400 naming each field, and writes nothing', async () => {
    const account = await newAccount();
    const { accessToken } = await login(api, account.email);
    await enrol(accessToken);
    const before = await mfaState(account.id);
    const cases: [unknown, Record<string, unknown>][] = [
      [{}, { code: ['Required'] }],
      [{ code: 123456 }, { code: [expect.stringMatching(/expected string/)] }],
      [{ code: null }, { code: [expect.any(String)] }],
      [{ code: '12345' }, { code: ['must be the 6-digit code of the authenticator app'] }],
      [{ code: '1234567' }, { code: ['must be the 6-digit code of the authenticator app'] }],
      [{ code: 'abcdef' }, { code: ['must be the 6-digit code of the authenticator app'] }],
      // recovery codes do not confirm an enrolment
      [{ code: 'ABCD-EFGH-IJKL-MNOP' }, { code: ['must be the 6-digit code of the authenticator app'] }],
      [{ code: '1'.repeat(65) }, { code: [expect.any(String)] }],
      [{ code: '123456', extra: true }, { extra: ['Unknown field'] }],
    ];
    for (const [body, errors] of cases) {
      await expectProblem(await confirm(accessToken, body), 400, { errors });
    }
    expect(await mfaState(account.id)).toEqual(before);
  });
});

describe('login of an enrolled account', () => {
  it('asks for the second factor, then answers tokens that work', async () => {
    const account = await enrolledAccount();
    const before = await mfaState(account.id);
    const mfaToken = await mfaTokenOf(account.email);
    // the first step issues no tokens
    expect((await mfaState(account.id)).refreshTokens).toBe(before.refreshTokens);
    expect(decodeProtectedHeader(mfaToken)).toMatchObject({ alg: 'RS256', typ: 'JWT' });
    const claims = decodeJwt(mfaToken);
    expect(claims).toMatchObject({ sub: String(account.id), aud: `${api.deps.config.JWT_AUDIENCE}/mfa` });
    expect(claims.exp! - claims.iat!).toBe(MFA_TOKEN_TTL_MS / 1000);

    const response = await postLoginMfa({ mfaToken, code: codeOf(account.secret) });
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as Tokens;
    expect(Object.keys(tokens).sort()).toEqual(['accessToken', 'refreshToken']);
    expect(await (await myself(tokens.accessToken)).json()).toMatchObject({
      id: account.id,
      multiFactorEnabled: true,
    });
    // the refresh token works without a second factor: MFA guards the login, not every refresh
    expect((await postRefresh(tokens.refreshToken)).status).toBe(200);
  });

  it('answers 400 to a wrong code, and the mfaToken still completes with the right one', async () => {
    const account = await enrolledAccount();
    const mfaToken = await mfaTokenOf(account.email);
    const before = await mfaState(account.id);
    const wrong = codeOf(account.secret) === '999999' ? '999998' : '999999';
    await expectProblem(await postLoginMfa({ mfaToken, code: wrong }), 400, {
      errors: { code: ['is wrong, expired or already used'] },
    });
    await expectProblem(await postLoginMfa({ mfaToken, code: 'AAAA-BBBB-CCCC-DDDD' }), 400, {
      errors: { code: ['is wrong, expired or already used'] },
    });
    // only the failure counters moved
    expect({ ...(await mfaState(account.id)), rateLimitHits: 0 }).toEqual({ ...before, rateLimitHits: 0 });
    expect((await postLoginMfa({ mfaToken, code: codeOf(account.secret) })).status).toBe(200);
  });

  it('refuses a code already used, also one of an earlier step, until the next step', async () => {
    const account = await enrolledAccount();
    const code = codeOf(account.secret);
    await loginWithCode(account.email, code);
    const mfaToken = await mfaTokenOf(account.email);
    await expectProblem(await postLoginMfa({ mfaToken, code }), 400, {
      errors: { code: [expect.any(String)] },
    });
    await expectProblem(await postLoginMfa({ mfaToken, code: codeOf(account.secret, -1) }), 400);
    nextStep();
    expect((await postLoginMfa({ mfaToken, code: codeOf(account.secret) })).status).toBe(200);
  });

  it('lets one of two concurrent logins with the same code through', async () => {
    const account = await enrolledAccount();
    const code = codeOf(account.secret);
    const mfaTokens = [await mfaTokenOf(account.email), await mfaTokenOf(account.email)];
    const responses = await Promise.all(mfaTokens.map((mfaToken) => postLoginMfa({ mfaToken, code })));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 400]);
    await Promise.all(responses.map((r) => r.text()));
  });

  it('takes a recovery code once, in any case and with or without dashes', async () => {
    const account = await enrolledAccount();
    const [first, second] = account.recoveryCodes as [string, string];
    const tokens = await loginWithCode(account.email, first.toLowerCase());
    expect((await myself(tokens.accessToken)).status).toBe(200);
    const spent = await api.deps
      .knex('mfa_recovery_codes')
      .where({ account_id: account.id })
      .whereNotNull('used_at');
    expect(spent).toHaveLength(1);

    const mfaToken = await mfaTokenOf(account.email);
    await expectProblem(await postLoginMfa({ mfaToken, code: first }), 400);
    await expectProblem(await postLoginMfa({ mfaToken, code: first.replace(/-/g, '') }), 400);
    expect((await postLoginMfa({ mfaToken, code: second.replace(/-/g, ' ') })).status).toBe(200);
    // another account's recovery code is no use here
    const other = await enrolledAccount();
    await expectProblem(
      await postLoginMfa({ mfaToken: await mfaTokenOf(account.email), code: other.recoveryCodes[0] }),
      400,
    );
  });

  it('honours skipMultiFactorAuthentication only where the account’s policy allows it', async () => {
    const account = await enrolledAccount();
    // not allowed: ignored, the second factor is still asked for
    await mfaTokenOf(account.email, { skipMultiFactorAuthentication: true });
    await mfaTokenOf(account.email, { SkipMultiFactorAuthentication: true });

    await api.deps.knex('accounts').where({ id: account.id }).update({ allow_skip_mfa: true });
    const skipped = await postLogin({
      email: account.email,
      password: TEST_PASSWORD,
      skipMultiFactorAuthentication: true,
    });
    expect(skipped.status).toBe(200);
    const tokens = (await skipped.json()) as Tokens;
    expect(Object.keys(tokens).sort()).toEqual(['accessToken', 'refreshToken']);
    expect((await myself(tokens.accessToken)).status).toBe(200);
    // allowed but not asked for: the second factor as usual
    await mfaTokenOf(account.email);
    await mfaTokenOf(account.email, { skipMultiFactorAuthentication: false });
    // and a wrong password stays a wrong password
    await expectProblem(
      await postLogin({
        email: account.email,
        password: 'Wrong-Password-1!',
        skipMultiFactorAuthentication: true,
      }),
      400,
    );
  });

  it('lets an Admin allow an account to skip its second factor, audited; no one else may', async () => {
    const account = await enrolledAccount();
    const path = `/api/accounts/${account.id}/skip-multi-factor-authentication`;
    const put = (token: string, allowed: unknown) =>
      api.fetch(path, { method: 'PUT', token, json: { allowed } });
    const skipLogin = () =>
      postLogin({ email: account.email, password: TEST_PASSWORD, skipMultiFactorAuthentication: true });

    // not an Admin: refused, also the account's own company and the account itself
    for (const token of [world.pmc.full.token, world.user.full.token, account.accessToken]) {
      expect((await put(token, true)).status).toBe(403);
      expect((await api.fetch(path, { token })).status).toBe(403);
    }
    await expectProblem(await put(world.admin.full.token, 'yes'), 400, {
      errors: { allowed: [expect.any(String)] },
    });
    expect((await put(world.admin.full.token, true)).status).toBe(200);
    expect(await (await api.fetch(path, { token: world.admin.full.token })).json()).toEqual({
      allowed: true,
    });

    const skipped = await skipLogin();
    expect(skipped.status).toBe(200);
    expect(Object.keys((await skipped.json()) as Tokens).sort()).toEqual(['accessToken', 'refreshToken']);

    const audit = await api.fetch('/api/operator-actions?action=account.mfa-skip', {
      token: world.admin.full.token,
    });
    const { items } = (await audit.json()) as {
      items: { accountId: number; changed: number; detail: unknown }[];
    };
    expect(items[0]).toMatchObject({
      accountId: world.admin.full.id,
      changed: 1,
      detail: { accountId: account.id, previous: false, allowed: true },
    });

    // taken back: the second factor is asked for again
    expect(await (await put(world.admin.full.token, false)).json()).toEqual({ allowed: false });
    await mfaTokenOf(account.email, { skipMultiFactorAuthentication: true });
    expect((await put(world.admin.full.token, true)).status).toBe(200);
    expect(
      (
        await api.fetch('/api/accounts/2147483647/skip-multi-factor-authentication', {
          method: 'PUT',
          token: world.admin.full.token,
          json: { allowed: true },
        })
      ).status,
    ).toBe(404);
  });

  it('makes the mfaToken no access token and no refresh token', async () => {
    const account = await enrolledAccount();
    const mfaToken = await mfaTokenOf(account.email);
    await expectUnauthenticated(await myself(mfaToken));
    await expectUnauthenticated(await enrol(mfaToken));
    await expectUnauthenticated(await postRefresh(mfaToken));
    // nor do access or refresh tokens pass as an mfaToken
    const tokens = await loginWithCode(account.email, codeOf(account.secret));
    nextStep();
    for (const token of [tokens.accessToken, tokens.refreshToken, 'garbage', `${mfaToken}x`]) {
      await expectUnauthenticated(await postLoginMfa({ mfaToken: token, code: codeOf(account.secret) }));
    }
    // none of that spent the mfaToken
    expect((await postLoginMfa({ mfaToken, code: codeOf(account.secret) })).status).toBe(200);
  });

  it('expires the mfaToken after 5 minutes', async () => {
    const account = await enrolledAccount();
    const early = await mfaTokenOf(account.email);
    const late = await mfaTokenOf(account.email);
    api.clock.advance(MFA_TOKEN_TTL_MS - 1000);
    expect((await postLoginMfa({ mfaToken: early, code: codeOf(account.secret) })).status).toBe(200);
    api.clock.advance(1000);
    nextStep();
    await expectUnauthenticated(await postLoginMfa({ mfaToken: late, code: codeOf(account.secret) }));
  });

  it('takes an mfaToken once', async () => {
    const account = await enrolledAccount();
    const mfaToken = await mfaTokenOf(account.email);
    expect((await postLoginMfa({ mfaToken, code: codeOf(account.secret) })).status).toBe(200);
    nextStep();
    await expectUnauthenticated(await postLoginMfa({ mfaToken, code: codeOf(account.secret) }));
    await expectUnauthenticated(await postLoginMfa({ mfaToken, code: account.recoveryCodes[0] }));
    // the refused attempts spent nothing
    expect((await loginWithCode(account.email, account.recoveryCodes[0]!)).accessToken).toEqual(
      expect.any(String),
    );

    // two at once: one wins
    nextStep();
    const another = await mfaTokenOf(account.email);
    const responses = await Promise.all([
      postLoginMfa({ mfaToken: another, code: codeOf(account.secret) }),
      postLoginMfa({ mfaToken: another, code: account.recoveryCodes[1] }),
    ]);
    expect(responses.map((r) => r.status).sort()).toEqual([200, 401]);
    await Promise.all(responses.map((r) => r.text()));
  });

  it('rate limits wrong codes per account: the 6th within 15 minutes is a 429', async () => {
    expect(MFA_PER_ACCOUNT.limit).toBe(5);
    const account = await enrolledAccount();
    const other = await enrolledAccount();
    const mfaToken = await mfaTokenOf(account.email);
    const wrong = codeOf(account.secret) === '000000' ? '000001' : '000000';
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect((await postLoginMfa({ mfaToken, code: wrong })).status, `attempt ${attempt}`).toBe(400);
    }
    const refused = await postLoginMfa({ mfaToken, code: codeOf(account.secret) });
    await expectProblem(refused, 429, { detail: /MfaPerAccount/ });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // a new login does not reset it, the recovery codes neither, and disabling shares the limit
    await expectProblem(
      await postLoginMfa({ mfaToken: await mfaTokenOf(account.email), code: account.recoveryCodes[0] }),
      429,
    );
    await expectProblem(
      await disable(account.accessToken, { password: TEST_PASSWORD, code: codeOf(account.secret) }),
      429,
    );
    // another account is not affected
    expect(
      (await postLoginMfa({ mfaToken: await mfaTokenOf(other.email), code: codeOf(other.secret) })).status,
    ).toBe(200);
    // after the window the right code gets in
    api.clock.advance(MFA_PER_ACCOUNT.windowMs);
    expect(
      (await postLoginMfa({ mfaToken: await mfaTokenOf(account.email), code: codeOf(account.secret) }))
        .status,
    ).toBe(200);
  });

  it('counts only failures: right codes leave the budget alone', async () => {
    const account = await enrolledAccount();
    for (let login = 1; login <= MFA_PER_ACCOUNT.limit + 2; login++) {
      await loginWithCode(account.email, codeOf(account.secret));
      nextStep();
    }
    const mfaToken = await mfaTokenOf(account.email);
    for (let attempt = 1; attempt <= MFA_PER_ACCOUNT.limit; attempt++) {
      expect((await postLoginMfa({ mfaToken, code: 'ZZZZ-ZZZZ-ZZZZ-ZZZZ' })).status).toBe(400);
    }
    expect((await postLoginMfa({ mfaToken, code: codeOf(account.secret) })).status).toBe(429);
  });

  it('refuses bad input with a 400 naming each field, writing nothing', async () => {
    const account = await enrolledAccount();
    const mfaToken = await mfaTokenOf(account.email);
    const before = await mfaState(account.id);
    const message = 'must be the 6-digit code of the authenticator app or a recovery code';
    const cases: [unknown, Record<string, unknown>][] = [
      [{}, { mfaToken: ['Required'], code: ['Required'] }],
      [{ mfaToken }, { code: ['Required'] }],
      [{ code: codeOf(account.secret) }, { mfaToken: ['Required'] }],
      [{ mfaToken: '', code: '123456' }, { mfaToken: [expect.any(String)] }],
      [{ mfaToken, code: 123456 }, { code: [expect.any(String)] }],
      [{ mfaToken, code: '12345' }, { code: [message] }],
      [{ mfaToken, code: 'ABCD-EFGH-IJKL-MNO' }, { code: [message] }],
      [{ mfaToken, code: 'ABCD-EFGH-IJKL-MNO1' }, { code: [message] }],
      [{ mfaToken, code: '123456', remember: true }, { remember: ['Unknown field'] }],
    ];
    for (const [body, errors] of cases) {
      await expectProblem(await postLoginMfa(body), 400, { errors });
    }
    expect(await mfaState(account.id)).toEqual(before);
    expect((await postLoginMfa({ mfaToken, code: codeOf(account.secret) })).status).toBe(200);
  });
});

describe('disabling', () => {
  it('needs the password and a code; then login needs the password only', async () => {
    const account = await enrolledAccount(PartyType.Contractor);
    const before = await mfaState(account.id);
    await expectProblem(
      await disable(account.accessToken, { password: 'Wrong-Password-1!', code: codeOf(account.secret) }),
      400,
      {
        errors: { password: ['is wrong'] },
      },
    );
    const wrong = codeOf(account.secret) === '000000' ? '000001' : '000000';
    await expectProblem(await disable(account.accessToken, { password: TEST_PASSWORD, code: wrong }), 400, {
      errors: { code: ['is wrong, expired or already used'] },
    });
    expect({ ...(await mfaState(account.id)), rateLimitHits: 0 }).toEqual({ ...before, rateLimitHits: 0 });

    const pendingLogin = await mfaTokenOf(account.email);
    const response = await disable(account.accessToken, {
      password: TEST_PASSWORD,
      code: codeOf(account.secret),
    });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    const row = await api.deps.knex('accounts').where({ id: account.id }).first();
    expect(row).toMatchObject({ mfa_enabled: false, mfa_secret: null, mfa_last_used_step: null });
    expect(await api.deps.knex('mfa_recovery_codes').where({ account_id: account.id })).toEqual([]);
    expect(await (await myself(account.accessToken)).json()).toMatchObject({ multiFactorEnabled: false });

    // an mfaToken from before is worthless now; the password alone logs in
    nextStep();
    await expectUnauthenticated(
      await postLoginMfa({ mfaToken: pendingLogin, code: account.recoveryCodes[0] }),
    );
    expect(Object.keys(await login(api, account.email)).sort()).toEqual(['accessToken', 'refreshToken']);
    // disabled: nothing to disable, and enrolment can start again
    await expectProblem(await disable(account.accessToken, { password: TEST_PASSWORD, code: '123456' }), 409);
    expect((await enrol(account.accessToken)).status).toBe(200);
  });

  it('takes a recovery code instead of the app’s code', async () => {
    const account = await enrolledAccount(PartyType.User);
    const response = await disable(account.accessToken, {
      password: TEST_PASSWORD,
      code: account.recoveryCodes[9],
    });
    expect(response.status).toBe(204);
    expect((await api.deps.knex('accounts').where({ id: account.id }).first()).mfa_enabled).toBe(false);
  });

  it('answers 409 for an account without MFA, also with an enrolment pending', async () => {
    const account = await newAccount();
    const { accessToken } = await login(api, account.email);
    await expectProblem(await disable(accessToken, { password: TEST_PASSWORD, code: '123456' }), 409, {
      detail: /not enabled/,
    });
    await enrol(accessToken);
    await expectProblem(await disable(accessToken, { password: TEST_PASSWORD, code: '123456' }), 409);
  });

  it('refuses bad input with a 400 naming each field, writing nothing', async () => {
    const account = await enrolledAccount();
    const before = await mfaState(account.id);
    const cases: [unknown, Record<string, unknown>][] = [
      [{}, { password: ['Required'], code: ['Required'] }],
      [{ password: TEST_PASSWORD }, { code: ['Required'] }],
      [{ code: codeOf(account.secret) }, { password: ['Required'] }],
      [{ password: '', code: codeOf(account.secret) }, { password: [expect.any(String)] }],
      [{ password: TEST_PASSWORD, code: 'nope' }, { code: [expect.any(String)] }],
      [{ password: TEST_PASSWORD, code: codeOf(account.secret), force: true }, { force: ['Unknown field'] }],
    ];
    for (const [body, errors] of cases) {
      await expectProblem(await disable(account.accessToken, body), 400, { errors });
    }
    expect(await mfaState(account.id)).toEqual(before);
  });
});
