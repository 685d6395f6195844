/**
 * The permission endpoints (docs/decisions.md#permissions) over HTTP and real Postgres: the catalog, and the
 * permissions of an account group within the caller's scope.
 */
import {
  ALL_PARTY_TYPES,
  PERMISSIONS,
  permissionByName,
  type AccountGroupPermissionMapping,
  type Page,
  type PermissionRead,
} from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { expectProblem, writableCounts } from '../../../tests/support/http';
import {
  buildAccount,
  buildGroup,
  expectAccessRules,
  login,
  type WorldParty,
  useTestApi,
} from '../../../tests/support/api';

const { api, world } = useTestApi({ world: true });

/** The permission tables and the counts of the tables any request could write, for refused reads. */
async function writtenState() {
  return {
    counts: await writableCounts(api),
    groups: await api.deps.knex('account_groups').orderBy('id'),
    mappings: await api.deps.knex('account_group_permissions').orderBy(['group_id', 'permission_id']),
  };
}

async function groupOf(accountId: number): Promise<number> {
  const row = await api.deps.knex('accounts').where({ id: accountId }).first('group_id');
  return row.group_id as number;
}

const mappings = (token: string, groupId: number | string, query = '', headers?: Record<string, string>) =>
  api.fetch(`/api/account-groups/${groupId}/permission-mappings${query}`, { token, headers });

const asRead = (p: (typeof PERMISSIONS)[number]): PermissionRead => ({
  id: p.id,
  name: p.name,
  resource: p.resource,
  action: p.action,
});

describe('GET /api/account-permissions', () => {
  it('lets every party type call it, without any permission', async () => {
    await expectAccessRules(api, world, {
      method: 'GET',
      path: '/api/account-permissions',
      allow: ALL_PARTY_TYPES,
    });
    const bare = await api.fetch('/api/account-permissions', { token: world.pmc.bare.token });
    expect(bare.status).toBe(200);
  });

  it('pages through the whole catalog by id', async () => {
    const token = world.contractor.full.token;
    const first = await api.fetch('/api/account-permissions', { token });
    expect(first.status).toBe(200);
    const page = (await first.json()) as Page<PermissionRead>;
    expect(page).toEqual({
      items: PERMISSIONS.slice(0, 20).map(asRead),
      pageNumber: 1,
      pageSize: 20,
      totalCount: PERMISSIONS.length,
      totalPages: Math.ceil(PERMISSIONS.length / 20),
      hasPreviousPage: false,
      hasNextPage: true,
    });
    expect(page.items[4]).toEqual({
      id: 4,
      name: 'AccountContactDetails.Create',
      resource: 'AccountContactDetails',
      action: 0,
    });
    const last = await api.fetch('/api/account-permissions?PageSize=50&PageNumber=2', { token });
    const lastPage = (await last.json()) as Page<PermissionRead>;
    expect(lastPage.items).toEqual(PERMISSIONS.slice(50, 100).map(asRead));
    expect(lastPage.hasNextPage).toBe(false);
  });

  it('sorts by SortByAttributeName / AscendingOrder, ties by id', async () => {
    const response = await api.fetch(
      '/api/account-permissions?SortByAttributeName=resource&AscendingOrder=false&PageSize=100',
      { token: world.user.full.token },
    );
    // resource names are plain words, so every collation orders them as code units do
    const ids = ((await response.json()) as Page<PermissionRead>).items.map((p) => p.id);
    const expected = [...PERMISSIONS]
      .sort((a, b) => (a.resource === b.resource ? b.id - a.id : a.resource < b.resource ? 1 : -1))
      .map((p) => p.id);
    expect(ids).toEqual(expected);
    const byAction = await api.fetch('/api/account-permissions?SortByAttributeName=action&PageSize=3', {
      token: world.user.full.token,
    });
    expect(((await byAction.json()) as Page<PermissionRead>).items.map((p) => p.id)).toEqual([0, 4, 8]);
  });

  it('answers text/plain with the same JSON', async () => {
    const response = await api.fetch('/api/account-permissions', {
      token: world.user.full.token,
      headers: { accept: 'text/plain' },
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(JSON.parse(await response.text())).toMatchObject({ totalCount: PERMISSIONS.length });
  });

  it('answers 400 for a bad page or sort attribute, and writes nothing', async () => {
    const token = world.admin.full.token;
    const before = await writtenState();
    await expectProblem(await api.fetch('/api/account-permissions?PageSize=101', { token }), 400, {
      errors: { PageSize: ['PageSize must be at most 100'] },
    });
    await expectProblem(
      await api.fetch('/api/account-permissions?SortByAttributeName=secret', { token }),
      400,
      {
        errors: { SortByAttributeName: [expect.stringMatching(/allowed: id, name, resource, action/)] },
      },
    );
    await expectProblem(await api.fetch('/api/account-permissions?Colour=red', { token }), 400, {
      errors: { Colour: ['Unknown field'] },
    });
    expect(await writtenState()).toEqual(before);
  });
});

describe('GET /api/account-groups/{id}/permission-mappings', () => {
  it('lets every party type call it', async () => {
    await expectAccessRules(api, world, {
      method: 'GET',
      path: async (caller: WorldParty) =>
        `/api/account-groups/${await groupOf(caller.full.id)}/permission-mappings`,
      allow: ALL_PARTY_TYPES,
    });
  });

  it('answers the group’s permissions by permission id, as mappings', async () => {
    const names = ['Webhook.Delete', 'Account.Read', 'AccountContactDetails.Create'] as const;
    const groupId = await buildGroup(api.deps, world.pmc.id, [...names]);
    const response = await mappings(world.pmc.full.token, groupId, '?PageSize=2');
    expect(response.status).toBe(200);
    const page = (await response.json()) as Page<AccountGroupPermissionMapping>;
    const expected = names
      .map((name) => permissionByName(name))
      .sort((a, b) => a.id - b.id)
      .map((p) => ({
        groupId,
        permissionId: p.id,
        permissionName: p.name,
        resource: p.resource,
        action: p.action,
      }));
    expect(page).toEqual({
      items: expected.slice(0, 2),
      pageNumber: 1,
      pageSize: 2,
      totalCount: 3,
      totalPages: 2,
      hasPreviousPage: false,
      hasNextPage: true,
    });
    const second = await mappings(world.pmc.full.token, groupId, '?PageSize=2&PageNumber=2');
    expect(((await second.json()) as Page<AccountGroupPermissionMapping>).items).toEqual(expected.slice(2));
  });

  it('answers an empty page for a group without permissions', async () => {
    const response = await mappings(world.pmc.bare.token, await groupOf(world.pmc.bare.id));
    expect(await response.json()).toMatchObject({ items: [], totalCount: 0 });
  });

  it('lets every party read its own group, a company its managed parties’ groups, an Admin any', async () => {
    for (const party of Object.values(world)) {
      const own = await mappings(party.full.token, await groupOf(party.full.id));
      expect(own.status).toBe(200);
      expect(await own.json()).toMatchObject({ totalCount: PERMISSIONS.length });
    }
    expect((await mappings(world.pmc.full.token, await groupOf(world.user.bare.id))).status).toBe(200);
    expect((await mappings(world.pmc.full.token, await groupOf(world.pmc.bare.id))).status).toBe(200);
    expect((await mappings(world.admin.full.token, await groupOf(world.otherUser.full.id))).status).toBe(200);
    const [global] = await api.deps
      .knex('account_groups')
      .insert({ party_id: null, name: 'Global' })
      .returning('id');
    expect((await mappings(world.admin.full.token, global.id)).status).toBe(200);
  });

  it('lets an account read its own group even when the group belongs to no party', async () => {
    const [global] = await api.deps
      .knex('account_groups')
      .insert({ party_id: null, name: 'Shared' })
      .returning('id');
    await api.deps
      .knex('account_group_permissions')
      .insert({ group_id: global.id, permission_id: permissionByName('Account.Read').id });
    const account = await buildAccount(api.deps, { partyId: world.insurer.id, groupId: global.id });
    const { accessToken } = await login(api, account.email);
    const response = await mappings(accessToken, global.id);
    expect(response.status).toBe(200);
    expect(
      ((await response.json()) as Page<AccountGroupPermissionMapping>).items.map((m) => m.permissionName),
    ).toEqual(['Account.Read']);
    // but not another party's caller
    await expectProblem(await mappings(world.insurer.full.token, global.id), 404);
  });

  it('answers 404 for a group out of scope, deleted or unknown', async () => {
    const [deleted] = await api.deps
      .knex('account_groups')
      .insert({ party_id: world.pmc.id, name: 'Gone', deleted: new Date() })
      .returning('id');
    const [global] = await api.deps
      .knex('account_groups')
      .insert({ party_id: null, name: 'Global' })
      .returning('id');
    const cases: [WorldParty, number][] = [
      [world.pmc, await groupOf(world.otherPmc.full.id)],
      [world.pmc, await groupOf(world.otherUser.full.id)],
      [world.pmc, await groupOf(world.admin.full.id)],
      [world.contractor, await groupOf(world.pmc.full.id)], // a managed party does not see its manager
      [world.user, await groupOf(world.user.bare.id)], // a User sees only its own account's group
      [world.pmc, global.id],
      [world.pmc, deleted.id],
      [world.admin, deleted.id],
      [world.admin, 2147483647],
    ];
    for (const [caller, groupId] of cases) {
      await expectProblem(await mappings(caller.full.token, groupId), 404, {
        detail: `Account group ${groupId} was not found`,
      });
    }
  });

  it('answers text/json with the same JSON', async () => {
    const response = await mappings(world.user.full.token, await groupOf(world.user.full.id), '', {
      accept: 'text/json',
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/json/);
    expect(JSON.parse(await response.text())).toMatchObject({ pageNumber: 1 });
  });

  it('answers 400 for a bad id or page, and writes nothing', async () => {
    const token = world.pmc.full.token;
    const groupId = await groupOf(world.pmc.full.id);
    const before = await writtenState();
    await expectProblem(await mappings(token, 'abc'), 400, { errors: { id: [expect.any(String)] } });
    await expectProblem(await mappings(token, 0), 400, { errors: { id: [expect.any(String)] } });
    await expectProblem(await mappings(token, groupId, '?PageNumber=0'), 400, {
      errors: { PageNumber: ['PageNumber must be at least 1'] },
    });
    // a sub-collection pages only; sorting is not offered
    await expectProblem(await mappings(token, groupId, '?SortByAttributeName=id'), 400, {
      errors: { SortByAttributeName: ['Unknown field'] },
    });
    expect(await writtenState()).toEqual(before);
  });
});

describe('a change-password token (docs/api.md#scopes)', () => {
  it('reaches neither permission endpoint (403)', async () => {
    const forced = await buildAccount(api.deps, { partyId: world.pmc.id, mustChangePassword: true });
    const { accessToken: token } = await login(api, forced.email);
    for (const path of [
      '/api/account-permissions',
      `/api/account-groups/${forced.groupId}/permission-mappings`,
    ]) {
      await expectProblem(await api.fetch(path, { token }), 403, {
        detail: 'A token with scope "change-password" cannot call this operation',
      });
    }
  });
});
