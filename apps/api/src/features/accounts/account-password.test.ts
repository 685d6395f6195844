/** PUT /api/accounts/{id}/password (docs/decisions.md#accounts): changing one's own password. */
import { PartyType, type AccountRead } from '@platform/shared';
import { decodeJwt } from 'jose';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { expectAccessRules, login, TEST_PASSWORD, useTestApi } from '../../../tests/support/api';
import { PASSWORD_CHANGE_PER_ACCOUNT } from './account-service';
import { accountRowOf, databaseSnapshot, freshAccount, groupOf } from '../../../tests/support/accounts';

const { api, world } = useTestApi({ world: true });
const NEW_PASSWORD = 'Brand-New-Pass-1';

beforeEach(async () => {
  api.clock.advance(1000);
  await api.deps.knex('rate_limit_hits').del();
});

const change = (token: string, id: number | string, body: unknown) =>
  api.fetch(`/api/accounts/${id}/password`, { method: 'PUT', token, json: body });
const refresh = (refreshToken: string) =>
  api.fetch('/api/auth/refresh', { method: 'POST', json: { refreshToken } });
const loginStatus = async (email: string, password: string) =>
  (await api.fetch('/api/auth/login', { method: 'POST', json: { email, password } })).status;
const passwordHits = async (id: number) => {
  const rows = await api.deps
    .knex('rate_limit_hits')
    .where('key', `${PASSWORD_CHANGE_PER_ACCOUNT.name}:${id}`);
  return rows.reduce((sum, row) => sum + row.hits, 0);
};

describe('access rules', () => {
  it('Admin, Property Management Company and User; no permission named', async () => {
    await expectAccessRules(api, world, {
      method: 'PUT',
      path: (caller) => `/api/accounts/${caller.full.id}/password`,
      // a weak new password: the allowed callers get past the guards to its 400, and nothing changes
      body: { currentPassword: TEST_PASSWORD, newPassword: 'weak' },
      allow: [PartyType.Admin, PartyType.PropertyManagementCompany, PartyType.User],
    });
  });

  it('does not need Account.Update: an account without any permission changes its password', async () => {
    const bare = await freshAccount(api, world.pmc.id);
    await api.deps.knex('account_group_permissions').where({ group_id: bare.groupId }).del();
    const { accessToken } = await login(api, bare.email);
    expect(
      await readJson(
        await change(accessToken, bare.id, { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD }),
      ),
    ).toEqual({});
  });
});

describe('success', () => {
  it.each([
    ['an Admin', 'admin'],
    ['a Property Management Company', 'pmc'],
    ['a User', 'user'],
  ] as const)(
    '%s changes its own password: 200 {}, the new one logs in, the old one not',
    async (_label, name) => {
      const me = await freshAccount(api, world[name].id);
      const response = await change(me.token, me.id, {
        currentPassword: TEST_PASSWORD,
        newPassword: NEW_PASSWORD,
      });
      expect(await readJson(response)).toEqual({});
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await loginStatus(me.email, TEST_PASSWORD)).toBe(400);
      expect(await loginStatus(me.email, NEW_PASSWORD)).toBe(200);
      const row = await accountRowOf(api, me.id);
      expect(row).toMatchObject({ must_change_password: false, last_modified: api.clock.now() });
      // the holder is told, and the successful attempt does not count against the rate limit
      const mails = await api.deps.knex('mail_outbox').where({ to_address: me.email });
      expect(mails).toEqual([
        expect.objectContaining({ kind: 'password-changed', subject: 'Your password was changed' }),
      ]);
      expect(await passwordHits(me.id)).toBe(0);
    },
  );

  it('signs out the account’s other sessions and keeps the calling one, also after it refreshed', async () => {
    const me = await freshAccount(api, world.pmc.id); // session A
    api.clock.advance(10_000);
    const sessionB = await login(api, me.email);
    api.clock.advance(10_000);
    const sessionC = await login(api, me.email);
    api.clock.advance(10_000);
    const refreshedB = await readJson<{ refreshToken: string }>(await refresh(sessionB.refreshToken));
    api.clock.advance(10_000);
    // B's first access token, from before its refresh, still names the session
    expect(
      await readJson(
        await change(sessionB.accessToken, me.id, {
          currentPassword: TEST_PASSWORD,
          newPassword: NEW_PASSWORD,
        }),
      ),
    ).toEqual({});
    expect((await refresh(me.refreshToken)).status).toBe(401);
    expect((await refresh(sessionC.refreshToken)).status).toBe(401);
    expect((await refresh(refreshedB.refreshToken)).status).toBe(200);
  });

  it('invalidates the recovery codes mailed before the change', async () => {
    const me = await freshAccount(api, world.user.id);
    const [code] = await api.deps
      .knex('recovery_codes')
      .insert({
        account_id: me.id,
        code_hash: 'x',
        expires_at: new Date(api.clock.now().getTime() + 3_600_000),
      })
      .returning('id');
    await readJson(
      await change(me.token, me.id, { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD }),
    );
    expect((await api.deps.knex('recovery_codes').where({ id: code.id }).first()).used_at).toEqual(
      api.clock.now(),
    );
  });
});

describe('the forced change of docs/api.md#scopes', () => {
  it('an account created with a password logs in with change-password scope, changes it, and refreshes into platform', async () => {
    const email = 'forced@password.example';
    const created = await readJson<AccountRead>(
      await api.fetch('/api/accounts', {
        method: 'POST',
        token: world.pmc.full.token,
        json: {
          partyId: world.user.id,
          groupId: await groupOf(api, world.user.full.id),
          email,
          password: 'Initial-Pass-1',
        },
      }),
    );
    const first = await login(api, email, 'Initial-Pass-1');
    expect(decodeJwt(first.accessToken).scope).toBe('change-password');
    await expectProblem(await api.fetch('/api/accounts/myself', { token: first.accessToken }), 403);
    expect(
      await readJson(
        await change(first.accessToken, created.id, {
          currentPassword: 'Initial-Pass-1',
          newPassword: NEW_PASSWORD,
        }),
      ),
    ).toEqual({});
    expect((await accountRowOf(api, created.id)).must_change_password).toBe(false);
    const next = await readJson<{ accessToken: string }>(await refresh(first.refreshToken));
    expect(decodeJwt(next.accessToken).scope).toBe('platform');
    const me = await readJson<AccountRead>(
      await api.fetch('/api/accounts/myself', { token: next.accessToken }),
    );
    expect(me).toMatchObject({ id: created.id, mustChangePassword: false });
    expect(decodeJwt((await login(api, email, NEW_PASSWORD)).accessToken).scope).toBe('platform');
  });
});

describe('only one’s own password', () => {
  it.each([
    ['a company for an account of a managed party', 'pmc', (): number => world.user.full.id],
    ['a company for its colleague', 'pmc', (): number => world.pmc.bare.id],
    ['an Admin for a company account', 'admin', (): number => world.pmc.full.id],
  ] as const)('403 for another account in scope: %s, nothing written', async (_label, caller, target) => {
    const before = await databaseSnapshot(api);
    await expectProblem(
      await change(world[caller].full.token, target(), {
        currentPassword: TEST_PASSWORD,
        newPassword: NEW_PASSWORD,
      }),
      403,
      { detail: /only its own password.*password recovery/ },
    );
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it.each([
    ['a company for another company', 'pmc', (): number => world.otherPmc.full.id],
    ['a User for its party mate', 'user', (): number => world.user.bare.id],
    ['a User for its managing company', 'user', (): number => world.pmc.full.id],
    ['anyone for an unknown account', 'admin', (): number => 999999],
  ] as const)('404 out of scope: %s, nothing written', async (_label, caller, target) => {
    const id = target();
    const before = await databaseSnapshot(api);
    const response = await change(world[caller].full.token, id, {
      currentPassword: TEST_PASSWORD,
      newPassword: NEW_PASSWORD,
    });
    await expectProblem(response, 404, { detail: `Account ${id} was not found` });
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it('404 for a deleted account whose access token still lives', async () => {
    const me = await freshAccount(api, world.pmc.id);
    await api.deps.knex('accounts').where({ id: me.id }).update({ deleted: api.clock.now() });
    await expectProblem(
      await change(me.token, me.id, { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD }),
      404,
    );
  });
});

describe('the current password', () => {
  it('a wrong one is a 400 naming currentPassword; the password stays and the failure counts', async () => {
    const me = await freshAccount(api, world.pmc.id);
    const before = await accountRowOf(api, me.id);
    await expectProblem(
      await change(me.token, me.id, { currentPassword: 'Wrong-Password-1', newPassword: NEW_PASSWORD }),
      400,
      {
        errors: { currentPassword: ['Is not the current password of the account'] },
      },
    );
    expect(await accountRowOf(api, me.id)).toEqual(before);
    expect(await passwordHits(me.id)).toBe(1);
  });

  it('after 10 failures in 15 minutes even the right one is a 429 with Retry-After, until the window ends', async () => {
    expect(PASSWORD_CHANGE_PER_ACCOUNT).toMatchObject({ limit: 10, windowMs: 15 * 60_000 });
    const me = await freshAccount(api, world.user.id);
    const windowMs = PASSWORD_CHANGE_PER_ACCOUNT.windowMs;
    api.clock.set(new Date(Math.ceil(api.clock.now().getTime() / windowMs) * windowMs + 1000));
    for (let attempt = 1; attempt <= 10; attempt++) {
      const response = await change(me.token, me.id, {
        currentPassword: `Wrong-${attempt}-Password`,
        newPassword: NEW_PASSWORD,
      });
      expect(response.status, `attempt ${attempt}`).toBe(400);
    }
    const refused = await change(me.token, me.id, {
      currentPassword: TEST_PASSWORD,
      newPassword: NEW_PASSWORD,
    });
    await expectProblem(refused, 429, { detail: /PasswordChange/ });
    expect(Number(refused.headers.get('retry-after'))).toBe(windowMs / 1000 - 1);
    expect(await loginStatus(me.email, TEST_PASSWORD)).toBe(200);
    // another account is not affected
    const other = await freshAccount(api, world.user.id);
    expect(
      (await change(other.token, other.id, { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD }))
        .status,
    ).toBe(200);
    // the next window opens again (the access token lives 15 minutes, so log in anew)
    api.clock.advance(windowMs);
    const { accessToken } = await login(api, me.email);
    expect(
      (await change(accessToken, me.id, { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD }))
        .status,
    ).toBe(200);
  });
});

describe('bad input: 400 naming the field, nothing written (not even a rate-limit hit)', () => {
  // a fresh login: the rate-limit test above moved the clock past the world's tokens
  let me: Awaited<ReturnType<typeof freshAccount>>;
  beforeAll(async () => {
    me = await freshAccount(api, world.pmc.id);
  });

  it.each([
    [
      'a short new password',
      { newPassword: 'Short-1' },
      'newPassword',
      'must be at least 10 characters long',
    ],
    [
      'a new password of two character classes',
      { newPassword: 'onlylowercase123' },
      'newPassword',
      'must mix at least three of: lower case, upper case, digits, symbols',
    ],
    [
      'the current password again',
      { newPassword: TEST_PASSWORD },
      'newPassword',
      'Must differ from the current password',
    ],
    ['no new password', { newPassword: undefined }, 'newPassword', 'Required'],
    ['an empty current password', { currentPassword: '' }, 'currentPassword', expect.any(String)],
    ['a numeric new password', { newPassword: 1234567890 }, 'newPassword', expect.any(String)],
    ['an unknown field', { password: NEW_PASSWORD }, 'password', 'Unknown field'],
  ])('%s', async (_label, change_, field, message) => {
    const before = await databaseSnapshot(api);
    await expectProblem(
      await change(me.token, me.id, {
        currentPassword: TEST_PASSWORD,
        newPassword: NEW_PASSWORD,
        ...change_,
      }),
      400,
      { errors: { [field]: [message] } },
    );
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it('a path id that is not one', async () => {
    await expectProblem(
      await change(me.token, 'myself', { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD }),
      400,
      { errors: { id: [expect.any(String)] } },
    );
  });
});
