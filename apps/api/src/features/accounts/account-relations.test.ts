/**
 * What hangs off an account (docs/decisions.md#accounts): GET /api/accounts/{id}/accessible-accounts,
 * /account-contact-details and /party.
 */
import {
  ALL_PARTY_TYPES,
  PartyType,
  type AccountContactDetailsRead,
  type AccountRead,
  type Page,
  type PartyRead,
} from '@platform/shared';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { buildAccount, buildParty, expectAccessRules, useTestApi } from '../../../tests/support/api';
import { databaseSnapshot, expectedScope } from '../../../tests/support/accounts';

const { api, world } = useTestApi({ world: true });

const get = (token: string, path: string) => api.fetch(path, { token });
const ids = (page: Page<AccountRead>) => page.items.map((a) => a.id).sort((a, b) => a - b);

describe('GET /api/accounts/{id}/accessible-accounts', () => {
  const accessible = (token: string, id: number | string, query = '?PageSize=100') =>
    get(token, `/api/accounts/${id}/accessible-accounts${query}`);

  it('access rules: every party type', async () => {
    await expectAccessRules(api, world, {
      method: 'GET',
      path: (caller) => `/api/accounts/${caller.full.id}/accessible-accounts`,
      allow: ALL_PARTY_TYPES,
    });
  });

  it.each(['admin', 'pmc', 'poolManager', 'contractor', 'user', 'broker', 'insurer'] as const)(
    'for its own account, %s gets exactly what it sees itself',
    async (name) => {
      const page = await readJson<Page<AccountRead>>(
        await accessible(world[name].full.token, world[name].full.id),
      );
      const list = await readJson<Page<AccountRead>>(
        await get(world[name].full.token, '/api/accounts?PageSize=100'),
      );
      expect(ids(page)).toEqual(ids(list));
      if (name !== 'admin') expect(ids(page)).toEqual(expectedScope(world, name));
    },
  );

  it('computes the scope of the account’s own party type: an Admin asking about a company, a User, a contractor', async () => {
    const token = world.admin.full.token;
    expect(ids(await readJson(await accessible(token, world.pmc.bare.id)))).toEqual(
      expectedScope(world, 'pmc'),
    );
    expect(ids(await readJson(await accessible(token, world.user.bare.id)))).toEqual([world.user.bare.id]);
    expect(ids(await readJson(await accessible(token, world.contractor.full.id)))).toEqual(
      expectedScope(world, 'contractor'),
    );
  });

  it('limits the result to what the caller sees', async () => {
    // a party managed by the contractor: the contractor sees it, its managing company does not
    const sub = await buildParty(api.deps, { type: PartyType.User, managedByPartyId: world.contractor.id });
    const subAccount = await buildAccount(api.deps, { partyId: sub.id });
    const asAdmin = await readJson<Page<AccountRead>>(
      await accessible(world.admin.full.token, world.contractor.full.id),
    );
    expect(ids(asAdmin)).toEqual(
      [...expectedScope(world, 'contractor'), subAccount.id].sort((a, b) => a - b),
    );
    const asCompany = await readJson<Page<AccountRead>>(
      await accessible(world.pmc.full.token, world.contractor.full.id),
    );
    expect(ids(asCompany)).toEqual(expectedScope(world, 'contractor'));
  });

  it('pages with PageSize and PageNumber', async () => {
    const scope = expectedScope(world, 'pmc');
    const page = await readJson<Page<AccountRead>>(
      await accessible(world.pmc.full.token, world.pmc.full.id, '?PageSize=3&PageNumber=2'),
    );
    expect(page).toMatchObject({
      pageNumber: 2,
      pageSize: 3,
      totalCount: scope.length,
      totalPages: Math.ceil(scope.length / 3),
      hasPreviousPage: true,
      hasNextPage: true,
    });
    expect(page.items.map((a) => a.id)).toEqual(scope.slice(3, 6));
  });

  it.each([
    ['a company asking about another company’s account', 'pmc', (): number => world.otherPmc.bare.id],
    ['a contractor asking about its managing company', 'contractor', (): number => world.pmc.bare.id],
    ['a User asking about its party mate', 'user', (): number => world.user.bare.id],
    ['anyone asking about an unknown account', 'admin', (): number => 999999],
  ] as const)('404 when the account itself is out of scope: %s', async (_label, caller, target) => {
    const id = target();
    await expectProblem(await accessible(world[caller].full.token, id), 404, {
      detail: `Account ${id} was not found`,
    });
  });

  it.each([
    ['PageSize=0', 'PageSize'],
    ['PageSize=101', 'PageSize'],
    ['PageNumber=x', 'PageNumber'],
    ['SortByAttributeName=email', 'SortByAttributeName'],
  ])('bad input: %s is a 400 naming %s, nothing written', async (query, field) => {
    const before = await databaseSnapshot(api);
    const problem = await expectProblem(
      await accessible(world.pmc.full.token, world.pmc.full.id, `?${query}`),
      400,
    );
    expect(Object.keys(problem.errors!)).toEqual([field]);
    await expectProblem(await accessible(world.pmc.full.token, 'me'), 400, {
      errors: { id: [expect.any(String)] },
    });
    expect(await databaseSnapshot(api)).toEqual(before);
  });
});

describe('GET /api/accounts/{id}/account-contact-details', () => {
  const details = (token: string, id: number | string, query = '') =>
    get(token, `/api/accounts/${id}/account-contact-details${query}`);
  let rows: { id: number }[];

  beforeAll(async () => {
    rows = await api.deps
      .knex('account_contact_details')
      .insert([
        {
          account_id: world.user.full.id,
          type: 'phone',
          value: '+49 30 1234',
          label: 'Home',
          is_primary: true,
        },
        { account_id: world.user.full.id, type: 'email', value: 'tenant@home.example' },
        { account_id: world.user.full.id, type: 'mobile', value: '+49 170 1', deleted: new Date() },
        { account_id: world.user.bare.id, type: 'fax', value: '+49 30 9' },
      ])
      .returning('id');
  });

  it('access rules: every party type', async () => {
    await expectAccessRules(api, world, {
      method: 'GET',
      path: (caller) => `/api/accounts/${caller.full.id}/account-contact-details`,
      allow: ALL_PARTY_TYPES,
    });
  });

  it('answers the live contact details of the account, as AccountContactDetailsRead', async () => {
    for (const token of [world.user.full.token, world.pmc.full.token, world.admin.bare.token]) {
      const page = await readJson<Page<AccountContactDetailsRead>>(await details(token, world.user.full.id));
      expect(page).toMatchObject({ totalCount: 2, pageNumber: 1, pageSize: 20 });
      expect(page.items).toEqual([
        {
          id: rows[0]!.id,
          accountId: world.user.full.id,
          type: 'phone',
          value: '+49 30 1234',
          label: 'Home',
          isPrimary: true,
          created: expect.any(String),
          lastModified: null,
          deleted: null,
        },
        expect.objectContaining({ id: rows[1]!.id, type: 'email', label: null, isPrimary: false }),
      ]);
    }
  });

  it('is an empty page for an account without details, and pages', async () => {
    const empty = await readJson<Page<AccountContactDetailsRead>>(
      await details(world.pmc.full.token, world.pmc.full.id),
    );
    expect(empty).toMatchObject({ items: [], totalCount: 0, totalPages: 0 });
    const second = await readJson<Page<AccountContactDetailsRead>>(
      await details(world.user.full.token, world.user.full.id, '?PageSize=1&PageNumber=2'),
    );
    expect(second.items.map((d) => d.id)).toEqual([rows[1]!.id]);
  });

  it('404 out of scope: a User reading its party mate, another company, a managed sibling', async () => {
    await expectProblem(await details(world.user.full.token, world.user.bare.id), 404);
    await expectProblem(await details(world.otherPmc.full.token, world.user.full.id), 404);
    await expectProblem(await details(world.contractor.full.token, world.user.full.id), 404);
  });

  it('bad input: a bad id or page is a 400 naming it, nothing written', async () => {
    const before = await databaseSnapshot(api);
    await expectProblem(await details(world.user.full.token, 'x'), 400, {
      errors: { id: [expect.any(String)] },
    });
    await expectProblem(await details(world.user.full.token, world.user.full.id, '?PageNumber=0'), 400, {
      errors: { PageNumber: [expect.any(String)] },
    });
    expect(await databaseSnapshot(api)).toEqual(before);
  });
});

describe('GET /api/accounts/{id}/party', () => {
  const party = (token: string, id: number | string) => get(token, `/api/accounts/${id}/party`);

  it('access rules: every party type', async () => {
    await expectAccessRules(api, world, {
      method: 'GET',
      path: (caller) => `/api/accounts/${caller.full.id}/party`,
      allow: ALL_PARTY_TYPES,
    });
  });

  it('answers the PartyRead of the account’s party', async () => {
    const row = await api.deps.knex('parties').where({ id: world.user.id }).first();
    const read = await readJson<PartyRead>(await party(world.user.full.token, world.user.full.id));
    expect(read).toEqual({
      id: world.user.id,
      type: PartyType.User,
      name: row.name,
      managedByPartyId: world.pmc.id,
      conferenceEnabled: false,
      created: row.created.toISOString(),
      lastModified: null,
      deleted: null,
    });
    expect(await readJson(await party(world.pmc.bare.token, world.user.full.id))).toEqual(read);
    expect(await readJson<PartyRead>(await party(world.admin.full.token, world.pmc.full.id))).toMatchObject({
      id: world.pmc.id,
      type: PartyType.PropertyManagementCompany,
      managedByPartyId: null,
    });
  });

  it('404 out of scope', async () => {
    await expectProblem(await party(world.user.full.token, world.pmc.full.id), 404);
    await expectProblem(await party(world.pmc.full.token, world.otherPmc.full.id), 404);
    await expectProblem(await party(world.insurer.full.token, world.admin.full.id), 404, {
      detail: `Account ${world.admin.full.id} was not found`,
    });
  });

  it('bad input: a bad id is a 400 naming it, nothing written', async () => {
    const before = await databaseSnapshot(api);
    await expectProblem(await party(world.admin.full.token, '1e3'), 400, {
      errors: { id: [expect.any(String)] },
    });
    expect(await databaseSnapshot(api)).toEqual(before);
  });
});
