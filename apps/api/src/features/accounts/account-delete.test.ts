/** DELETE /api/accounts/{id} (docs/decisions.md#accounts): soft delete, refresh tokens revoked, in one transaction. */
import { PartyType } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { expectProblem } from '../../../tests/support/http';
import { buildAccount, buildParty, expectAccessRules, login, useTestApi } from '../../../tests/support/api';
import { accountRowOf, databaseSnapshot, freshAccount } from '../../../tests/support/accounts';

const { api, world } = useTestApi({ world: true });

const remove = (token: string, id: number | string) =>
  api.fetch(`/api/accounts/${id}`, { method: 'DELETE', token });

/** Asserts account `id` is soft-deleted now, invisible, and its refresh tokens revoked. */
async function expectDeleted(id: number) {
  const row = await accountRowOf(api, id);
  expect(row.deleted).toEqual(api.clock.now());
  const tokens = await api.deps.knex('refresh_tokens').where({ account_id: id });
  expect(tokens.every((t) => t.revoked_at?.getTime() === api.clock.now().getTime())).toBe(true);
  await expectProblem(await api.fetch(`/api/accounts/${id}`, { token: world.admin.full.token }), 404);
}

describe('DELETE /api/accounts/{id}', () => {
  it('access rules: Admin, Property Management Company and User, with Account.Delete (Users unchecked)', async () => {
    await expectAccessRules(api, world, {
      method: 'DELETE',
      // a fresh account of the caller's party each time, so the world's accounts survive
      path: async (caller) => `/api/accounts/${(await buildAccount(api.deps, { partyId: caller.id })).id}`,
      allow: [PartyType.Admin, PartyType.PropertyManagementCompany, PartyType.User],
      permission: 'Account.Delete',
    });
  });

  it('an Admin deletes an account of any party: 204, no body; its sessions end and its refresh fails', async () => {
    const target = await freshAccount(api, world.otherUser.id);
    const second = await login(api, target.email);
    const response = await remove(world.admin.full.token, target.id);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    await expectDeleted(target.id);
    for (const refreshToken of [target.refreshToken, second.refreshToken]) {
      const refreshed = await api.fetch('/api/auth/refresh', { method: 'POST', json: { refreshToken } });
      expect(refreshed.status).toBe(401);
    }
    const relogin = await api.fetch('/api/auth/login', {
      method: 'POST',
      json: { email: target.email, password: 'Test-Password-1!' },
    });
    expect(relogin.status).toBe(400);
  });

  it('a company deletes an account of a managed party, with the account’s contact details', async () => {
    const target = await buildAccount(api.deps, { partyId: world.contractor.id });
    await api.deps.knex('account_contact_details').insert([
      { account_id: target.id, type: 'phone', value: '+49 30 1234' },
      { account_id: target.id, type: 'email', value: 'other@example.com' },
    ]);
    expect((await remove(world.pmc.full.token, target.id)).status).toBe(204);
    await expectDeleted(target.id);
    const details = await api.deps.knex('account_contact_details').where({ account_id: target.id });
    expect(details.map((d) => d.deleted)).toEqual([api.clock.now(), api.clock.now()]);
  });

  it('a User deletes itself', async () => {
    const me = await freshAccount(api, world.user.id);
    expect((await remove(me.token, me.id)).status).toBe(204);
    await expectDeleted(me.id);
  });

  it('a company account deletes itself, and leaves the other accounts alone', async () => {
    const party = await buildParty(api.deps, { type: PartyType.PropertyManagementCompany });
    const me = await freshAccount(api, party.id);
    const colleague = await buildAccount(api.deps, { partyId: party.id });
    expect((await remove(me.token, me.id)).status).toBe(204);
    await expectDeleted(me.id);
    expect((await accountRowOf(api, colleague.id)).deleted).toBeNull();
  });

  it.each([
    ['a company deleting another company’s account', 'pmc', 'otherPmc'],
    ['a company deleting an account of a party another company manages', 'pmc', 'otherUser'],
    ['a company deleting the Admin', 'pmc', 'admin'],
    ['a User deleting its managing company', 'user', 'pmc'],
  ] as const)('404 outside the scope: %s, nothing written', async (_label, caller, target) => {
    const id = world[target].bare.id;
    const before = await databaseSnapshot(api);
    await expectProblem(await remove(world[caller].full.token, id), 404, {
      detail: `Account ${id} was not found`,
    });
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it('404 for a User deleting the other account of its party, for an unknown and for a deleted account', async () => {
    const gone = await buildAccount(api.deps, { partyId: world.pmc.id });
    await api.deps
      .knex('accounts')
      .where({ id: gone.id })
      .update({ deleted: new Date(0) });
    const before = await databaseSnapshot(api);
    await expectProblem(await remove(world.user.bare.token, world.user.full.id), 404);
    await expectProblem(await remove(world.admin.full.token, 999999), 404);
    await expectProblem(await remove(world.pmc.full.token, gone.id), 404);
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it.each(['abc', '0', '-1', '2147483648', '1.5'])(
    'bad input: id %s is a 400 naming id, nothing written',
    async (id) => {
      const before = await databaseSnapshot(api);
      await expectProblem(await remove(world.admin.full.token, id), 400, {
        errors: { id: [expect.any(String)] },
      });
      expect(await databaseSnapshot(api)).toEqual(before);
    },
  );

  it('an Admin deletes another Admin and itself, but the platform’s last Admin account stays (409)', async () => {
    // start from the world's two Admin accounts (the access-rule test left extra ones)
    await api.deps
      .knex('accounts')
      .where({ party_id: world.admin.id })
      .whereNotIn('id', [world.admin.full.id, world.admin.bare.id])
      .update({ deleted: api.clock.now() });
    // an account of a deleted Admin party does not count: it cannot log in
    const deadParty = await buildParty(api.deps, { type: PartyType.Admin });
    await buildAccount(api.deps, { partyId: deadParty.id });
    await api.deps.knex('parties').where({ id: deadParty.id }).update({ deleted: api.clock.now() });

    const second = await freshAccount(api, world.admin.id);
    expect((await remove(world.admin.full.token, world.admin.bare.id)).status).toBe(204);
    expect((await remove(second.token, second.id)).status).toBe(204);
    const before = await databaseSnapshot(api);
    await expectProblem(await remove(world.admin.full.token, world.admin.full.id), 409, {
      detail: 'The last Admin account of the platform cannot be deleted',
    });
    expect(await databaseSnapshot(api)).toEqual(before);
  });
});
