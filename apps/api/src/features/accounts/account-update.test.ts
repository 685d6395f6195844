/** PATCH /api/accounts/{id} and PATCH /api/accounts/batch (docs/decisions.md#accounts): JSON merge patches of accounts. */
import { PartyType, type AccountRead } from '@platform/shared';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { buildAccount, buildGroup, expectAccessRules, useTestApi } from '../../../tests/support/api';
import { accountRowOf, databaseSnapshot, freshAccount, groupOf } from '../../../tests/support/accounts';

const { api, world } = useTestApi({ world: true });

beforeEach(() => api.clock.advance(1000));

const patch = (token: string, id: number | string, body: unknown) =>
  api.fetch(`/api/accounts/${id}`, { method: 'PATCH', token, json: body });
const bulk = (token: string, body: unknown) =>
  api.fetch('/api/accounts/batch', { method: 'PATCH', token, json: body });

describe('PATCH /api/accounts/{id}', () => {
  it('access rules: Admin, Property Management Company and User, with Account.Update (Users unchecked)', async () => {
    await expectAccessRules(api, world, {
      method: 'PATCH',
      path: (caller) => `/api/accounts/${caller.full.id}`,
      body: { firstName: 'Access' },
      allow: [PartyType.Admin, PartyType.PropertyManagementCompany, PartyType.User],
      permission: 'Account.Update',
    });
  });

  it('an Admin changes any account; absent fields stay, lastModified is set', async () => {
    const target = await buildAccount(api.deps, { partyId: world.otherPmc.id });
    await api.deps.knex('accounts').where({ id: target.id }).update({ first_name: 'Old', last_name: 'Name' });
    const updated = await readJson<AccountRead>(
      await patch(world.admin.full.token, target.id, { firstName: 'New', email: 'Renamed@Update.Example' }),
    );
    expect(updated).toMatchObject({
      id: target.id,
      email: 'Renamed@Update.Example',
      firstName: 'New',
      lastName: 'Name',
      groupId: target.groupId,
      lastModified: api.clock.now().toISOString(),
    });
    expect(
      await readJson(await api.fetch(`/api/accounts/${target.id}`, { token: world.admin.full.token })),
    ).toEqual(updated);
  });

  it('null clears a name (JSON merge patch)', async () => {
    const target = await buildAccount(api.deps, { partyId: world.user.id });
    await api.deps
      .knex('accounts')
      .where({ id: target.id })
      .update({ first_name: 'First', last_name: 'Last' });
    const updated = await readJson<AccountRead>(
      await patch(world.pmc.full.token, target.id, { lastName: null }),
    );
    expect(updated).toMatchObject({ firstName: 'First', lastName: null });
  });

  it('a company moves an account of a managed party to another group of that party', async () => {
    const target = await buildAccount(api.deps, { partyId: world.contractor.id });
    const otherGroup = await buildGroup(api.deps, world.contractor.id, []);
    const updated = await readJson<AccountRead>(
      await patch(world.pmc.full.token, target.id, { groupId: otherGroup }),
    );
    expect(updated.groupId).toBe(otherGroup);
  });

  it('a User edits its own names and email', async () => {
    const me = await freshAccount(api, world.user.id);
    const updated = await readJson<AccountRead>(
      await patch(me.token, me.id, { firstName: 'Tenant', lastName: 'Person', email: `moved-${me.email}` }),
    );
    expect(updated).toMatchObject({ firstName: 'Tenant', lastName: 'Person', email: `moved-${me.email}` });
  });

  it('a User may not change its groupId (403, nothing written) but may send its current one', async () => {
    const me = await freshAccount(api, world.user.id);
    const otherGroup = await buildGroup(api.deps, world.user.id);
    const before = await databaseSnapshot(api);
    await expectProblem(await patch(me.token, me.id, { groupId: otherGroup, firstName: 'X' }), 403, {
      detail: 'A User cannot change the account group (groupId) of its account',
    });
    expect(await databaseSnapshot(api)).toEqual(before);
    const same = await readJson<AccountRead>(
      await patch(me.token, me.id, { groupId: me.groupId, firstName: 'Y' }),
    );
    expect(same).toMatchObject({ groupId: me.groupId, firstName: 'Y' });
  });

  it('refuses a group of another party with a 400 naming groupId, nothing written', async () => {
    const target = await buildAccount(api.deps, { partyId: world.user.id });
    const foreignGroup = await groupOf(api, world.pmc.full.id);
    const before = await databaseSnapshot(api);
    await expectProblem(await patch(world.pmc.full.token, target.id, { groupId: foreignGroup }), 400, {
      errors: { groupId: [`Account group ${foreignGroup} is not a live group of party ${world.user.id}`] },
    });
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it('keeps emails unique (409, case-insensitive) but lets an account change the case of its own', async () => {
    const target = await buildAccount(api.deps, { partyId: world.pmc.id, email: 'case@update.example' });
    const before = await databaseSnapshot(api);
    const taken = world.otherPmc.full.email.toUpperCase();
    await expectProblem(await patch(world.pmc.full.token, target.id, { email: taken }), 409, {
      detail: `An account with the email ${taken} already exists`,
    });
    expect(await databaseSnapshot(api)).toEqual(before);
    const recased = await readJson<AccountRead>(
      await patch(world.pmc.full.token, target.id, { email: 'CASE@update.example' }),
    );
    expect(recased.email).toBe('CASE@update.example');
  });

  it.each([
    ['a company changing another company’s account', 'pmc', 'otherPmc'],
    ['a company changing an account of a party another company manages', 'pmc', 'otherUser'],
    ['a User changing its managing company', 'user', 'pmc'],
    ['an Admin changing an unknown id', 'admin', undefined],
  ] as const)('404 outside the scope: %s, nothing written', async (_label, caller, target) => {
    const id = target ? world[target].full.id : 999999;
    const before = await databaseSnapshot(api);
    await expectProblem(await patch(world[caller].full.token, id, { firstName: 'Hacked' }), 404, {
      detail: `Account ${id} was not found`,
    });
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it('404 for a User changing the other account of its own party', async () => {
    await expectProblem(await patch(world.user.bare.token, world.user.full.id, { firstName: 'Hacked' }), 404);
    expect((await accountRowOf(api, world.user.full.id)).first_name).not.toBe('Hacked');
  });

  it.each([
    ['an empty patch', {}, '(body)'],
    ['a null email', { email: null }, 'email'],
    ['a null groupId', { groupId: null }, 'groupId'],
    ['an invalid email', { email: 'nope' }, 'email'],
    ['an empty first name', { firstName: '' }, 'firstName'],
    ['a string groupId', { groupId: '3' }, 'groupId'],
    ['a read-only field', { partyId: 1 }, 'partyId'],
    ['a password', { password: 'New-Password-1!' }, 'password'],
  ])('bad input: %s is a 400 naming %s, nothing written', async (_label, body, field) => {
    const target = world.contractor.bare.id;
    const before = await databaseSnapshot(api);
    const problem = await expectProblem(await patch(world.pmc.full.token, target, body), 400);
    expect(Object.keys(problem.errors!)).toEqual([field]);
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it('bad input: a path id that is not one', async () => {
    await expectProblem(await patch(world.pmc.full.token, 'abc', { firstName: 'X' }), 400, {
      errors: { id: [expect.any(String)] },
    });
  });
});

describe('PATCH /api/accounts/batch', () => {
  it('access rules: Admin and Property Management Company with Account.Update', async () => {
    await expectAccessRules(api, world, {
      method: 'PATCH',
      path: '/api/accounts/batch',
      body: (caller: { full: { id: number } }) => ({ ids: [caller.full.id], patch: { lastName: 'Access' } }),
      allow: [PartyType.Admin, PartyType.PropertyManagementCompany],
      permission: 'Account.Update',
    });
  });

  it('changes the accounts in scope and answers their ids in the order asked; others are never changed', async () => {
    const own = await buildAccount(api.deps, { partyId: world.pmc.id });
    const managed = await buildAccount(api.deps, { partyId: world.user.id });
    const foreign = await buildAccount(api.deps, { partyId: world.otherPmc.id });
    const deleted = await buildAccount(api.deps, { partyId: world.pmc.id });
    await api.deps.knex('accounts').where({ id: deleted.id }).update({ deleted: api.clock.now() });
    const foreignBefore = await accountRowOf(api, foreign.id);
    const deletedBefore = await accountRowOf(api, deleted.id);
    const changed = await readJson<number[]>(
      await bulk(world.pmc.full.token, {
        ids: [managed.id, foreign.id, 999999, own.id, deleted.id, managed.id],
        patch: { firstName: 'Bulk', lastName: null },
      }),
    );
    expect(changed).toEqual([managed.id, own.id]);
    for (const id of changed) {
      expect(await accountRowOf(api, id)).toMatchObject({
        first_name: 'Bulk',
        last_name: null,
        last_modified: api.clock.now(),
      });
    }
    expect(await accountRowOf(api, foreign.id)).toEqual(foreignBefore);
    expect(await accountRowOf(api, deleted.id)).toEqual(deletedBefore);
  });

  it('an Admin changes accounts of any party', async () => {
    const a = await buildAccount(api.deps, { partyId: world.otherUser.id });
    const b = await buildAccount(api.deps, { partyId: world.insurer.id });
    expect(
      await readJson(await bulk(world.admin.full.token, { ids: [a.id, b.id], patch: { lastName: 'Admin' } })),
    ).toEqual([a.id, b.id]);
  });

  it('answers an empty array when no id is in scope, and writes nothing', async () => {
    const before = await databaseSnapshot(api);
    const changed = await readJson(
      await bulk(world.pmc.full.token, {
        ids: [world.otherPmc.full.id, world.admin.full.id],
        patch: { firstName: 'No' },
      }),
    );
    expect(changed).toEqual([]);
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it('moves accounts of one party to a group of that party; accounts of several parties cannot share one (400)', async () => {
    const a = await buildAccount(api.deps, { partyId: world.broker.id });
    const b = await buildAccount(api.deps, { partyId: world.broker.id });
    const group = await buildGroup(api.deps, world.broker.id, []);
    expect(
      await readJson(await bulk(world.pmc.full.token, { ids: [a.id, b.id], patch: { groupId: group } })),
    ).toEqual([a.id, b.id]);
    expect(await groupOf(api, b.id)).toBe(group);

    const other = await buildAccount(api.deps, { partyId: world.user.id });
    const before = await databaseSnapshot(api);
    await expectProblem(
      await bulk(world.pmc.full.token, { ids: [a.id, other.id], patch: { groupId: group, firstName: 'Z' } }),
      400,
      { errors: { 'patch.groupId': ['The accounts belong to 2 parties; an account group belongs to one'] } },
    );
    await expectProblem(
      await bulk(world.pmc.full.token, { ids: [other.id], patch: { groupId: group } }),
      400,
      {
        errors: { 'patch.groupId': [`Account group ${group} is not a live group of party ${world.user.id}`] },
      },
    );
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it('keeps emails unique: one email for two accounts, or a taken one, is a 409 and nothing is written', async () => {
    const a = await buildAccount(api.deps, { partyId: world.pmc.id });
    const b = await buildAccount(api.deps, { partyId: world.pmc.id });
    const before = await databaseSnapshot(api);
    await expectProblem(
      await bulk(world.pmc.full.token, { ids: [a.id, b.id], patch: { email: 'shared@bulk.example' } }),
      409,
    );
    await expectProblem(
      await bulk(world.pmc.full.token, { ids: [a.id], patch: { email: world.admin.full.email } }),
      409,
    );
    expect(await databaseSnapshot(api)).toEqual(before);
    expect(
      await readJson(
        await bulk(world.pmc.full.token, { ids: [a.id], patch: { email: 'single@bulk.example' } }),
      ),
    ).toEqual([a.id]);
  });

  it.each([
    ['no ids', { ids: [], patch: { firstName: 'X' } }, 'ids'],
    ['101 ids', { ids: Array.from({ length: 101 }, (_, i) => i + 1), patch: { firstName: 'X' } }, 'ids'],
    ['a string id', { ids: ['1'], patch: { firstName: 'X' } }, 'ids.0'],
    ['no patch', { ids: [1] }, 'patch'],
    ['an empty patch', { ids: [1], patch: {} }, 'patch'],
    ['an unknown patch field', { ids: [1], patch: { deleted: null } }, 'patch.deleted'],
    ['a null email', { ids: [1], patch: { email: null } }, 'patch.email'],
  ])('bad input: %s is a 400 naming %s, nothing written', async (_label, body, field) => {
    const before = await databaseSnapshot(api);
    const problem = await expectProblem(await bulk(world.admin.full.token, body), 400);
    expect(Object.keys(problem.errors!)).toEqual([field]);
    expect(await databaseSnapshot(api)).toEqual(before);
  });
});
