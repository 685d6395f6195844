/**
 * The account reads of docs/decisions.md#accounts (list, search, batch read, myself, read) over
 * HTTP and Postgres: who may call them, what each party type sees (docs/api.md#scope-of-data), the 404 outside the scope, bad
 * input, and that a change-password token reaches none of the account operations.
 */
import { ALL_PARTY_TYPES, type AccountRead, type Page } from '@platform/shared';
import { describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { buildParty, expectAccessRules, login, partiesByType, useTestApi } from '../../../tests/support/api';
import {
  databaseSnapshot,
  expectedScope,
  freshAccount,
  namedParties,
  type WorldName,
} from '../../../tests/support/accounts';

const { api, world } = useTestApi({ world: true });

const ids = (accounts: AccountRead[]) => accounts.map((a) => a.id).sort((a, b) => a - b);

async function liveAccountIds(): Promise<number[]> {
  const rows: { id: number }[] = await api.deps
    .knex('accounts')
    .whereNull('deleted')
    .select('id')
    .orderBy('id');
  return rows.map((r) => r.id);
}

/** What `viewer` must see: its world scope, and for an Admin every live account. */
async function expectedFor(viewer: WorldName): Promise<number[]> {
  return world[viewer].type === 1 ? liveAccountIds() : expectedScope(world, viewer);
}

const worldNames: WorldName[] = [
  'admin',
  'pmc',
  'poolManager',
  'contractor',
  'user',
  'broker',
  'insurer',
  'otherPmc',
];

describe('access rules (all seven party types, no permission named)', () => {
  it('GET /api/accounts', async () => {
    await expectAccessRules(api, world, { method: 'GET', path: '/api/accounts', allow: ALL_PARTY_TYPES });
  });
  it('POST /api/accounts/search', async () => {
    await expectAccessRules(api, world, {
      method: 'POST',
      path: '/api/accounts/search',
      body: { filters: [] },
      allow: ALL_PARTY_TYPES,
    });
  });
  it('POST /api/accounts/batch', async () => {
    await expectAccessRules(api, world, {
      method: 'POST',
      path: '/api/accounts/batch',
      body: (caller: { full: { id: number } }) => ({ ids: [caller.full.id] }),
      allow: ALL_PARTY_TYPES,
    });
  });
  it('GET /api/accounts/myself', async () => {
    await expectAccessRules(api, world, {
      method: 'GET',
      path: '/api/accounts/myself',
      allow: ALL_PARTY_TYPES,
    });
  });
  it('GET /api/accounts/{id}', async () => {
    await expectAccessRules(api, world, {
      method: 'GET',
      path: (caller) => `/api/accounts/${caller.full.id}`,
      allow: ALL_PARTY_TYPES,
    });
  });
  it('answers every party type with a 200, also without any permission', async () => {
    for (const party of partiesByType(world)) {
      for (const { id, token } of [party.full, party.bare]) {
        for (const [method, path, json] of [
          ['GET', '/api/accounts', undefined],
          ['POST', '/api/accounts/search', {}],
          ['POST', '/api/accounts/batch', { ids: [id] }],
          ['GET', '/api/accounts/myself', undefined],
          ['GET', `/api/accounts/${id}`, undefined],
        ] as const) {
          const response = await api.fetch(path, { method, token, json });
          expect(response.status, `${method} ${path} as party type ${party.type}`).toBe(200);
          await response.body?.cancel();
        }
      }
    }
  });
});

describe('scope of the results per party type', () => {
  it.each(worldNames)('GET /api/accounts as %s lists exactly its scope', async (viewer) => {
    const page = await readJson<Page<AccountRead>>(
      await api.fetch('/api/accounts?PageSize=100', { token: world[viewer].full.token }),
    );
    const expected = await expectedFor(viewer);
    expect(ids(page.items)).toEqual(expected);
    expect(page.totalCount).toBe(expected.length);
  });

  it.each(worldNames)('POST /api/accounts/search as %s finds exactly its scope', async (viewer) => {
    const page = await readJson<Page<AccountRead>>(
      await api.fetch('/api/accounts/search?PageSize=100', {
        method: 'POST',
        token: world[viewer].full.token,
        json: { filters: [{ attribute: 'id', operator: 'gte', value: 1 }] },
      }),
    );
    expect(ids(page.items)).toEqual(await expectedFor(viewer));
  });

  it.each(worldNames)('POST /api/accounts/batch as %s answers only the ids in its scope', async (viewer) => {
    const everyWorldId = namedParties(world).flatMap(([, party]) => [party.full.id, party.bare.id]);
    const found = await readJson<AccountRead[]>(
      await api.fetch('/api/accounts/batch', {
        method: 'POST',
        token: world[viewer].full.token,
        json: { ids: everyWorldId },
      }),
    );
    expect(ids(found)).toEqual(expectedScope(world, viewer));
  });

  it('a User sees only itself, not the other account of its own party', async () => {
    const page = await readJson<Page<AccountRead>>(
      await api.fetch('/api/accounts', { token: world.user.bare.token }),
    );
    expect(ids(page.items)).toEqual([world.user.bare.id]);
  });

  it.each(worldNames)('GET /api/accounts/myself as %s is its own account', async (viewer) => {
    const me = await readJson<AccountRead>(
      await api.fetch('/api/accounts/myself', { token: world[viewer].bare.token }),
    );
    expect(me).toMatchObject({
      id: world[viewer].bare.id,
      email: world[viewer].bare.email,
      partyId: world[viewer].id,
    });
  });

  it('GET /api/accounts/{id} answers an account in scope with its AccountRead, no secrets', async () => {
    const read = await readJson<Record<string, unknown>>(
      await api.fetch(`/api/accounts/${world.contractor.bare.id}`, { token: world.pmc.full.token }),
    );
    expect(read).toEqual({
      id: world.contractor.bare.id,
      partyId: world.contractor.id,
      groupId: expect.any(Number),
      email: world.contractor.bare.email,
      firstName: null,
      lastName: null,
      mustChangePassword: false,
      multiFactorEnabled: false,
      created: expect.any(String),
      lastModified: null,
      deleted: null,
    });
  });
});

describe('404 outside the scope', () => {
  it.each([
    ['a company reading another company', 'pmc', 'otherPmc'],
    ['a company reading a party managed by another company', 'pmc', 'otherUser'],
    ['a managed contractor reading its managing company', 'contractor', 'pmc'],
    ['a managed contractor reading a sibling party', 'contractor', 'broker'],
    ['a User reading its managing company', 'user', 'pmc'],
    ['a pool manager reading the Admin', 'poolManager', 'admin'],
    ['an insurer reading a company', 'insurer', 'pmc'],
  ] as const)('GET /api/accounts/{id}: %s', async (_label, viewer, target) => {
    const id = world[target].full.id;
    await expectProblem(await api.fetch(`/api/accounts/${id}`, { token: world[viewer].full.token }), 404, {
      detail: `Account ${id} was not found`,
    });
  });

  it('GET /api/accounts/{id}: a User reading the other account of its own party', async () => {
    const id = world.user.full.id;
    await expectProblem(await api.fetch(`/api/accounts/${id}`, { token: world.user.bare.token }), 404);
  });

  it('GET /api/accounts/{id}: a deleted account, even for the Admin', async () => {
    const party = await buildParty(api.deps, { type: 5 });
    const gone = await freshAccount(api, party.id);
    await api.deps.knex('accounts').where({ id: gone.id }).update({ deleted: api.clock.now() });
    await expectProblem(await api.fetch(`/api/accounts/${gone.id}`, { token: world.admin.full.token }), 404);
    // and myself of a deleted account's still-valid token
    await expectProblem(await api.fetch('/api/accounts/myself', { token: gone.token }), 404);
  });
});

describe('bad input: 400 naming the field, nothing written', () => {
  it.each([
    ['GET', '/api/accounts?PageSize=0', undefined, 'PageSize'],
    ['GET', '/api/accounts?SortByAttributeName=password', undefined, 'SortByAttributeName'],
    [
      'POST',
      '/api/accounts/search',
      { filters: [{ attribute: 'passwordHash', operator: 'eq', value: 'x' }] },
      'filters.0.attribute',
    ],
    ['POST', '/api/accounts/batch', { ids: [] }, 'ids'],
    ['GET', '/api/accounts/abc', undefined, 'id'],
    ['GET', '/api/accounts/2147483648', undefined, 'id'],
  ] as const)('%s %s', async (method, path, json, field) => {
    const before = await databaseSnapshot(api);
    const problem = await expectProblem(
      await api.fetch(path, { method, token: world.pmc.full.token, json }),
      400,
    );
    expect(Object.keys(problem.errors ?? {})).toContain(field);
    expect(await databaseSnapshot(api)).toEqual(before);
  });
});

describe('a change-password token reaches only PUT /api/accounts/{id}/password', () => {
  it('is refused with 403 everywhere else among the account operations', async () => {
    const forced = await freshAccount(api, world.pmc.id, { mustChangePassword: true });
    const target = world.pmc.bare.id;
    for (const [method, path, json] of [
      ['GET', '/api/accounts', undefined],
      ['GET', '/api/accounts/myself', undefined],
      ['GET', `/api/accounts/${forced.id}`, undefined],
      ['POST', '/api/accounts/search', {}],
      ['POST', '/api/accounts/batch', { ids: [forced.id] }],
      [
        'POST',
        '/api/accounts',
        { partyId: world.pmc.id, groupId: forced.groupId, email: 'forced-new@example.com' },
      ],
      ['PATCH', `/api/accounts/${forced.id}`, { firstName: 'Forced' }],
      ['PATCH', '/api/accounts/batch', { ids: [target], patch: { firstName: 'Forced' } }],
      ['DELETE', `/api/accounts/${target}`, undefined],
      ['GET', `/api/accounts/${forced.id}/party`, undefined],
      ['GET', `/api/accounts/${forced.id}/accessible-accounts`, undefined],
      ['GET', `/api/accounts/${forced.id}/account-contact-details`, undefined],
    ] as const) {
      const before = await databaseSnapshot(api);
      const response = await api.fetch(path, { method, token: forced.token, json });
      await expectProblem(response, 403, {
        detail: 'A token with scope "change-password" cannot call this operation',
      });
      expect(await databaseSnapshot(api), `${method} ${path}`).toEqual(before);
    }
    // the same token does reach the password route (a weak new password is then its 400)
    const password = await api.fetch(`/api/accounts/${forced.id}/password`, {
      method: 'PUT',
      token: forced.token,
      json: { currentPassword: 'whatever-1A', newPassword: 'weak' },
    });
    await expectProblem(password, 400, { errors: { newPassword: ['must be at least 10 characters long'] } });
  });

  it('holds for a login of an account flagged must_change_password', async () => {
    const forced = await freshAccount(api, world.user.id, { mustChangePassword: true });
    const tokens = await login(api, forced.email);
    await expectProblem(await api.fetch('/api/accounts/myself', { token: tokens.accessToken }), 403);
  });
});
