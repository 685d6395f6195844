/**
 * Collection conventions (docs/decisions.md#api-conventions) through the real account routes over HTTP and
 * Postgres: paging and its envelope, list sorting, the search DSL, batch reads and the caller's
 * scope of data.
 */
import { PartyType, type Page as SharedPage } from '@platform/shared';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildAccount, buildParty, login, useTestApi } from '../../tests/support/api';
import { expectProblem, writableCounts } from '../../tests/support/http';

interface Account {
  id: number;
  email: string;
  partyId: number;
  firstName: string | null;
  lastName: string | null;
  created: string;
}
type Page = SharedPage<Account>;

const { api } = useTestApi();
const tokens: Record<'admin' | 'acme' | 'tenant' | 'pool' | 'other', string> = {
  admin: '',
  acme: '',
  tenant: '',
  pool: '',
  other: '',
};
const ids: Record<string, number> = {};
let poolPartyId: number;
let specialsPartyId: number;
/** The 25 live accounts of the pool party, index 0 = bulk-01. */
const pool: { id: number; email: string; firstName: string | null; lastName: string; created: string }[] = [];

const pad = (n: number) => String(n).padStart(2, '0');

beforeAll(async () => {
  const deps = api.deps;
  const add = async (key: string, partyId: number, email: string) => {
    ids[key] = (await buildAccount(deps, { partyId, email })).id;
  };

  const admin = await buildParty(deps, { type: PartyType.Admin, name: 'Platform' });
  await add('admin', admin.id, 'admin@platform.example');

  const acme = await buildParty(deps, { type: PartyType.PropertyManagementCompany, name: 'Acme' });
  await add('acme', acme.id, 'boss@acme.example');
  const tenants = await buildParty(deps, { type: PartyType.User, name: 'Tenant', managedByPartyId: acme.id });
  await add('tenant1', tenants.id, 'tenant-1@acme.example');
  await add('tenant2', tenants.id, 'tenant-2@acme.example');
  const gone = await buildParty(deps, { type: PartyType.User, name: 'Gone', managedByPartyId: acme.id });
  await add('gone', gone.id, 'gone@acme.example');
  await deps.knex('parties').where({ id: gone.id }).update({ deleted: new Date() });

  const other = await buildParty(deps, { type: PartyType.PropertyManagementCompany, name: 'Other' });
  await add('other', other.id, 'boss@other.example');

  const poolParty = await buildParty(deps, { type: PartyType.PoolManager, name: 'Pool' });
  poolPartyId = poolParty.id;
  for (let i = 1; i <= 25; i++) {
    const email = `bulk-${pad(i)}@pool.example`;
    const { id } = await buildAccount(deps, { partyId: poolParty.id, email });
    const firstName = i % 5 === 0 ? null : `First${pad(i)}`;
    const lastName = `Last${pad(26 - i)}`;
    const created = new Date(Date.UTC(2025, 0, 1, i)).toISOString();
    await deps.knex('accounts').where({ id }).update({ first_name: firstName, last_name: lastName, created });
    pool.push({ id, email, firstName, lastName, created });
  }
  await add('poolDeleted', poolParty.id, 'bulk-deleted@pool.example');
  await deps.knex('accounts').where({ id: ids.poolDeleted }).update({ deleted: new Date() });

  const specials = await buildParty(deps, { type: PartyType.Contractor, name: 'Specials' });
  specialsPartyId = specials.id;
  await add('percent', specials.id, 'percent%sign@special.example');
  await add('underscore', specials.id, 'under_score@special.example');
  await add('underX', specials.id, 'underXscore@special.example');
  await add('quote', specials.id, "o'brien@special.example");
  await add('backslash', specials.id, 'back\\slash@special.example');

  tokens.admin = (await login(api, 'admin@platform.example')).accessToken;
  tokens.acme = (await login(api, 'boss@acme.example')).accessToken;
  tokens.tenant = (await login(api, 'tenant-1@acme.example')).accessToken;
  tokens.pool = (await login(api, 'bulk-01@pool.example')).accessToken;
  tokens.other = (await login(api, 'boss@other.example')).accessToken;
});

async function list(query: string, token = tokens.pool): Promise<Page> {
  const response = await api.fetch(`/api/accounts${query}`, { token });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text) as Page;
}

async function search(body: unknown, query = '', token = tokens.admin): Promise<Page> {
  const response = await api.fetch(`/api/accounts/search${query}`, { method: 'POST', token, json: body });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text) as Page;
}

const searchProblem = (body: unknown, query = '', token = tokens.admin) =>
  api.fetch(`/api/accounts/search${query}`, { method: 'POST', token, json: body });

/** A filter limiting a search to the pool party, so counts do not depend on other seeds. */
const inPool = () => ({ attribute: 'partyId', operator: 'eq', value: poolPartyId });
const emails = (page: Page | Account[]) => ('items' in page ? page.items : page).map((a) => a.email);
const poolIds = (...numbers: number[]) => numbers.map((n) => pool[n - 1]!.id);

describe('pagination', () => {
  it('defaults to PageNumber 1 and PageSize 20, in the full envelope', async () => {
    const page = await list('');
    expect(Object.keys(page).sort()).toEqual(
      [
        'hasNextPage',
        'hasPreviousPage',
        'items',
        'pageNumber',
        'pageSize',
        'totalCount',
        'totalPages',
      ].sort(),
    );
    expect(page).toMatchObject({
      pageNumber: 1,
      pageSize: 20,
      totalCount: 25,
      totalPages: 2,
      hasPreviousPage: false,
      hasNextPage: true,
    });
    expect(page.items.map((a) => a.id)).toEqual(poolIds(...Array.from({ length: 20 }, (_, i) => i + 1)));
  });

  it('walks every page once, with the right flags, and answers an empty page past the end', async () => {
    const pages = [await list('?PageSize=10&PageNumber=1'), await list('?PageSize=10&PageNumber=2')];
    pages.push(await list('?PageSize=10&PageNumber=3'));
    expect(pages.map((p) => [p.pageNumber, p.items.length, p.hasPreviousPage, p.hasNextPage])).toEqual([
      [1, 10, false, true],
      [2, 10, true, true],
      [3, 5, true, false],
    ]);
    for (const page of pages) expect(page).toMatchObject({ pageSize: 10, totalCount: 25, totalPages: 3 });
    expect(pages.flatMap((p) => p.items.map((a) => a.id))).toEqual(pool.map((a) => a.id));

    expect(await list('?PageSize=10&PageNumber=4')).toEqual({
      items: [],
      pageNumber: 4,
      pageSize: 10,
      totalCount: 25,
      totalPages: 3,
      hasPreviousPage: true,
      hasNextPage: false,
    });
    expect(await list('?PageNumber=1000000')).toMatchObject({
      items: [],
      totalCount: 25,
      hasNextPage: false,
    });
  });

  it('takes PageSize up to 100 and exactly one page when everything fits', async () => {
    expect(await list('?PageSize=100')).toMatchObject({
      pageSize: 100,
      totalCount: 25,
      totalPages: 1,
      hasPreviousPage: false,
      hasNextPage: false,
    });
    expect((await list('?PageSize=1')).items).toHaveLength(1);
  });

  it('matches query parameter names case-insensitively', async () => {
    const page = await list('?pagesize=5&PAGENUMBER=2');
    expect(page).toMatchObject({ pageSize: 5, pageNumber: 2, totalPages: 5 });
    expect(page.items.map((a) => a.id)).toEqual(poolIds(6, 7, 8, 9, 10));
  });

  it('pages a search the same way', async () => {
    const page = await search({ filters: [inPool()] }, '?PageSize=10&PageNumber=3');
    expect(page).toMatchObject({
      pageNumber: 3,
      pageSize: 10,
      totalCount: 25,
      totalPages: 3,
      hasNextPage: false,
    });
    expect(page.items.map((a) => a.id)).toEqual(poolIds(21, 22, 23, 24, 25));
  });

  it('is an empty first page when nothing matches', async () => {
    expect(
      await search({ filters: [{ attribute: 'email', operator: 'eq', value: 'nobody@x.example' }] }),
    ).toEqual({
      items: [],
      pageNumber: 1,
      pageSize: 20,
      totalCount: 0,
      totalPages: 0,
      hasPreviousPage: false,
      hasNextPage: false,
    });
  });

  it.each([
    ['PageSize', '0', 'PageSize must be at least 1'],
    ['PageSize', '101', 'PageSize must be at most 100'],
    ['PageSize', '-1', 'PageSize must be a whole number'],
    ['PageSize', 'abc', 'PageSize must be a whole number'],
    ['PageSize', '1.5', 'PageSize must be a whole number'],
    ['PageSize', '', 'PageSize must be a whole number'],
    ['PageSize', '0x10', 'PageSize must be a whole number'],
    ['PageSize', '1e1', 'PageSize must be a whole number'],
    ['PageSize', '%2010', 'PageSize must be a whole number'],
    ['PageSize', '99999999999999999999', 'PageSize must be at most 100'],
    ['PageNumber', '0', 'PageNumber must be at least 1'],
    ['PageNumber', '-3', 'PageNumber must be a whole number'],
    ['PageNumber', '1000001', 'PageNumber must be at most 1000000'],
    ['pageNumber', 'two', 'PageNumber must be a whole number'],
  ])('refuses %s=%s with a 400 naming it', async (name, value, message) => {
    const canonical = name === 'pageNumber' ? 'PageNumber' : name;
    for (const response of [
      await api.fetch(`/api/accounts?${name}=${value}`, { token: tokens.pool }),
      await searchProblem({}, `?${name}=${value}`),
    ]) {
      await expectProblem(response, 400, {
        detail: `Invalid query: ${canonical}`,
        errors: { [canonical]: [message] },
      });
    }
  });

  it('refuses a parameter given twice, also in two spellings', async () => {
    const twice = await api.fetch('/api/accounts?PageSize=5&PageSize=6', { token: tokens.pool });
    await expectProblem(twice, 400, { errors: { PageSize: ['PageSize must be given once, not 2 times'] } });
    const spellings = await api.fetch('/api/accounts?PageSize=5&pagesize=6', { token: tokens.pool });
    await expectProblem(spellings, 400, {
      errors: {
        PageSize: ['Given more than once (as "PageSize", "pagesize"); names match case-insensitively'],
      },
    });
  });

  it('refuses unknown query parameters, naming each', async () => {
    const response = await api.fetch('/api/accounts?PageSize=5&foo=1&Page=2', { token: tokens.pool });
    await expectProblem(response, 400, { errors: { foo: ['Unknown field'], Page: ['Unknown field'] } });
    // search takes no sorting in the query: that is the body's job
    const sortQuery = await searchProblem({}, '?SortByAttributeName=email');
    await expectProblem(sortQuery, 400, { errors: { SortByAttributeName: ['Unknown field'] } });
  });
});

describe('sorting a plain list: SortByAttributeName and AscendingOrder', () => {
  const sorted = (values: string[], ascending = true) =>
    [...values].sort((a, b) => (ascending ? a.localeCompare(b) : b.localeCompare(a)));

  it('sorts by email either way', async () => {
    const all = pool.map((a) => a.email);
    expect(emails(await list('?SortByAttributeName=email&PageSize=100'))).toEqual(sorted(all));
    expect(emails(await list('?SortByAttributeName=email&AscendingOrder=false&PageSize=100'))).toEqual(
      sorted(all, false),
    );
  });

  it('matches the attribute name and the boolean case-insensitively', async () => {
    const page = await list('?sortbyattributename=EMAIL&ascendingorder=FALSE&PageSize=3');
    expect(emails(page)).toEqual(['bulk-25@pool.example', 'bulk-24@pool.example', 'bulk-23@pool.example']);
    const numeric = await list('?SortByAttributeName=Email&AscendingOrder=0&PageSize=1');
    expect(emails(numeric)).toEqual(['bulk-25@pool.example']);
  });

  it('sorts by lastName, created and id', async () => {
    expect((await list('?SortByAttributeName=lastName&PageSize=3')).items.map((a) => a.lastName)).toEqual([
      'Last01',
      'Last02',
      'Last03',
    ]);
    const byCreated = await list('?SortByAttributeName=created&AscendingOrder=false&PageSize=2');
    expect(byCreated.items.map((a) => a.created)).toEqual([pool[24]!.created, pool[23]!.created]);
    const byIdDesc = await list('?SortByAttributeName=id&AscendingOrder=false&PageSize=2');
    expect(byIdDesc.items.map((a) => a.id)).toEqual(poolIds(25, 24));
  });

  it('puts nulls last in both directions, and pages a sort with nulls without losing rows', async () => {
    const ascending = await list('?SortByAttributeName=firstName&PageSize=100');
    expect(ascending.items.map((a) => a.firstName).slice(-5)).toEqual([null, null, null, null, null]);
    expect(ascending.items[0]!.firstName).toBe('First01');
    const descending = await list('?SortByAttributeName=firstName&AscendingOrder=false&PageSize=100');
    expect(descending.items[0]!.firstName).toBe('First24');
    expect(descending.items.map((a) => a.firstName).slice(-5)).toEqual([null, null, null, null, null]);

    const paged = [];
    for (let n = 1; n <= 3; n++)
      paged.push(...(await list(`?SortByAttributeName=firstName&PageSize=10&PageNumber=${n}`)).items);
    expect(paged.map((a) => a.id)).toEqual(ascending.items.map((a) => a.id));
  });

  it('orders by id when only AscendingOrder is given', async () => {
    expect((await list('?AscendingOrder=false&PageSize=3')).items.map((a) => a.id)).toEqual(
      poolIds(25, 24, 23),
    );
    expect((await list('?AscendingOrder=true&PageSize=3')).items.map((a) => a.id)).toEqual(poolIds(1, 2, 3));
  });

  it.each([
    ['passwordHash'],
    ['password_hash'],
    ['a.email'],
    ['email desc'],
    ['email; drop table accounts'],
    [''],
  ])('refuses SortByAttributeName=%j, naming the allowed ones', async (attribute) => {
    const response = await api.fetch(`/api/accounts?SortByAttributeName=${encodeURIComponent(attribute)}`, {
      token: tokens.pool,
    });
    await expectProblem(response, 400, {
      detail: 'Invalid query: SortByAttributeName',
      errors: {
        SortByAttributeName: [
          `Unknown sort attribute "${attribute}"; allowed: id, email, firstName, lastName, partyId, created, lastModified`,
        ],
      },
    });
  });

  it.each([['maybe'], ['yes'], ['2'], ['']])('refuses AscendingOrder=%j', async (value) => {
    const response = await api.fetch(`/api/accounts?AscendingOrder=${value}`, { token: tokens.pool });
    await expectProblem(response, 400, { errors: { AscendingOrder: [expect.any(String)] } });
  });
});

describe('search DSL: { filters: [{ attribute, operator, value }], sort: [{ attribute, ascending }] }', () => {
  const find = async (...filters: object[]) =>
    (
      await search({ filters: [inPool(), ...filters], sort: [{ attribute: 'id' }] }, '?PageSize=100')
    ).items.map((a) => a.id);

  it('eq and ne', async () => {
    expect(await find({ attribute: 'email', operator: 'eq', value: 'bulk-03@pool.example' })).toEqual(
      poolIds(3),
    );
    expect(await find({ attribute: 'id', operator: 'eq', value: pool[6]!.id })).toEqual(poolIds(7));
    // ne keeps rows where the attribute is null: "not First01" is true of a missing first name
    const notFirst01 = await find({ attribute: 'firstName', operator: 'ne', value: 'First01' });
    expect(notFirst01).toHaveLength(24);
    expect(notFirst01).not.toContain(pool[0]!.id);
  });

  it('lt, lte, gt and gte on integers and timestamps', async () => {
    const third = pool[2]!.id;
    expect(await find({ attribute: 'id', operator: 'lt', value: third })).toEqual(poolIds(1, 2));
    expect(await find({ attribute: 'id', operator: 'lte', value: third })).toEqual(poolIds(1, 2, 3));
    expect(await find({ attribute: 'id', operator: 'gt', value: pool[22]!.id })).toEqual(poolIds(24, 25));
    expect(await find({ attribute: 'id', operator: 'gte', value: pool[22]!.id })).toEqual(
      poolIds(23, 24, 25),
    );
    expect(await find({ attribute: 'created', operator: 'lt', value: '2025-01-01T03:00:00Z' })).toEqual(
      poolIds(1, 2),
    );
    expect(
      await find({ attribute: 'created', operator: 'gte', value: '2025-01-02T00:00:00.000+00:00' }),
    ).toEqual(poolIds(24, 25));
    expect(await find({ attribute: 'created', operator: 'lte', value: '2025-01-01T02:00:00+00:00' })).toEqual(
      poolIds(1, 2),
    );
    expect(await find({ attribute: 'created', operator: 'gt', value: '2025-01-02' })).toEqual(poolIds(25));
  });

  it('contains and startsWith, case-insensitively', async () => {
    expect(await find({ attribute: 'email', operator: 'contains', value: 'ULK-1' })).toEqual(
      poolIds(10, 11, 12, 13, 14, 15, 16, 17, 18, 19),
    );
    expect(await find({ attribute: 'email', operator: 'startsWith', value: 'Bulk-2' })).toEqual(
      poolIds(20, 21, 22, 23, 24, 25),
    );
    // startsWith anchors at the start
    expect(await find({ attribute: 'email', operator: 'startsWith', value: 'ulk' })).toEqual([]);
  });

  it('in', async () => {
    expect(await find({ attribute: 'id', operator: 'in', value: poolIds(7, 3, 5) })).toEqual(
      poolIds(3, 5, 7),
    );
    expect(
      await find({ attribute: 'email', operator: 'in', value: ['bulk-01@pool.example', 'nobody@x.example'] }),
    ).toEqual(poolIds(1));
  });

  it('isNull, and eq/ne null', async () => {
    const nullNames = poolIds(5, 10, 15, 20, 25);
    expect(await find({ attribute: 'firstName', operator: 'isNull', value: true })).toEqual(nullNames);
    expect(await find({ attribute: 'firstName', operator: 'isNull' })).toEqual(nullNames);
    expect(await find({ attribute: 'firstName', operator: 'isNull', value: false })).toHaveLength(20);
    expect(await find({ attribute: 'firstName', operator: 'eq', value: null })).toEqual(nullNames);
    expect(await find({ attribute: 'firstName', operator: 'ne', value: null })).toHaveLength(20);
  });

  it('combines filters with AND', async () => {
    expect(
      await find(
        { attribute: 'email', operator: 'startsWith', value: 'bulk-1' },
        { attribute: 'firstName', operator: 'isNull', value: true },
      ),
    ).toEqual(poolIds(10, 15));
  });

  it('sorts by several keys, nulls last, and defaults ascending', async () => {
    const page = await search(
      { filters: [inPool()], sort: [{ attribute: 'firstName' }, { attribute: 'email', ascending: false }] },
      '?PageSize=100',
    );
    const expected = [
      ...pool.filter((a) => a.firstName !== null).map((a) => a.email),
      ...['25', '20', '15', '10', '05'].map((n) => `bulk-${n}@pool.example`),
    ];
    expect(emails(page)).toEqual(expected);
    const byLastName = await search({
      filters: [inPool()],
      sort: [{ attribute: 'lastName', ascending: true }],
    });
    expect(byLastName.items[0]!.email).toBe('bulk-25@pool.example');
  });

  it('matches property names, attributes and operators case-insensitively', async () => {
    const page = await search(
      {
        Filters: [
          { Attribute: 'PARTYID', Operator: 'EQ', Value: poolPartyId },
          { ATTRIBUTE: 'email', OPERATOR: 'startswith', VALUE: 'bulk-0' },
        ],
        SORT: [{ attribute: 'ID', Ascending: false }],
      },
      '?PageSize=100',
    );
    expect(page.items.map((a) => a.id)).toEqual(poolIds(9, 8, 7, 6, 5, 4, 3, 2, 1));
  });

  it('treats an empty body as no filters and no sort', async () => {
    const page = await search({}, '', tokens.pool);
    expect(page).toMatchObject({ totalCount: 25, pageSize: 20 });
    expect(page.items.map((a) => a.id)).toEqual(poolIds(...Array.from({ length: 20 }, (_, i) => i + 1)));
  });

  it('escapes % and _ in contains and startsWith: they match themselves only', async () => {
    const special = async (operator: string, value: string) =>
      emails(
        await search({
          filters: [
            { attribute: 'partyId', operator: 'eq', value: specialsPartyId },
            { attribute: 'email', operator, value },
          ],
          sort: [{ attribute: 'email' }],
        }),
      );
    expect(await special('contains', '%')).toEqual(['percent%sign@special.example']);
    expect(await special('contains', '_')).toEqual(['under_score@special.example']);
    expect(await special('contains', 'under_')).toEqual(['under_score@special.example']);
    expect(await special('startsWith', '%')).toEqual([]);
    expect(await special('contains', '\\')).toEqual(['back\\slash@special.example']);
    expect(await special('contains', '%%')).toEqual([]);
  });

  it('treats SQL-looking values as plain values', async () => {
    const before = await writableCounts(api);
    for (const value of ["' or '1'='1", "x'; drop table accounts; --", '1 or 1=1', "') or true --"]) {
      for (const operator of ['eq', 'contains', 'startsWith', 'ne']) {
        const page = await search({
          filters: [
            { attribute: 'partyId', operator: 'eq', value: specialsPartyId },
            { attribute: 'email', operator, value },
          ],
        });
        expect(page.totalCount, `${operator} ${value}`).toBe(operator === 'ne' ? 5 : 0);
      }
    }
    const quoted = await search({
      filters: [{ attribute: 'email', operator: 'eq', value: "o'brien@special.example" }],
    });
    expect(emails(quoted)).toEqual(["o'brien@special.example"]);
    expect(await writableCounts(api)).toEqual(before);
  });

  it.each([
    [
      'an unknown filter attribute',
      { filters: [{ attribute: 'passwordHash', operator: 'eq', value: 'x' }] },
      'filters.0.attribute',
    ],
    [
      'a column name instead of the attribute',
      { filters: [{ attribute: 'party_id', operator: 'eq', value: 1 }] },
      'filters.0.attribute',
    ],
    ['an unknown sort attribute', { sort: [{ attribute: 'mfaSecret' }] }, 'sort.0.attribute'],
    [
      'an unknown operator',
      { filters: [{ attribute: 'email', operator: 'like', value: 'x' }] },
      'filters.0.operator',
    ],
    [
      'an SQL operator',
      { filters: [{ attribute: 'email', operator: '=', value: 'x' }] },
      'filters.0.operator',
    ],
    ['a missing attribute', { filters: [{ operator: 'eq', value: 'x' }] }, 'filters.0.attribute'],
    ['a missing operator', { filters: [{ attribute: 'email', value: 'x' }] }, 'filters.0.operator'],
    ['an unknown top-level field', { filters: [], where: 'id = 1' }, 'where'],
    [
      'an unknown field in a filter',
      { filters: [{ attribute: 'id', operator: 'eq', value: 1, not: true }] },
      'filters.0.not',
    ],
    ['an unknown field in a sort', { sort: [{ attribute: 'id', direction: 'desc' }] }, 'sort.0.direction'],
    ['a non-boolean ascending', { sort: [{ attribute: 'id', ascending: 'desc' }] }, 'sort.0.ascending'],
    ['filters that are not a list', { filters: { attribute: 'id' } }, 'filters'],
    [
      'more than 20 filters',
      { filters: Array.from({ length: 21 }, () => ({ attribute: 'id', operator: 'gt', value: 0 })) },
      'filters',
    ],
    ['more than 5 sort keys', { sort: Array.from({ length: 6 }, () => ({ attribute: 'id' })) }, 'sort'],
    [
      'a value list over 100',
      { filters: [{ attribute: 'id', operator: 'in', value: Array.from({ length: 101 }, (_, i) => i + 1) }] },
      'filters.0.value',
    ],
    [
      'a string value over 1000 characters',
      { filters: [{ attribute: 'email', operator: 'eq', value: 'x'.repeat(1001) }] },
      'filters.0.value',
    ],
    [
      'an object value',
      { filters: [{ attribute: 'email', operator: 'eq', value: { $ne: null } }] },
      'filters.0.value',
    ],
  ])('refuses %s with a 400 naming %s', async (_label, body, field) => {
    const problem = await expectProblem(await searchProblem(body), 400);
    expect(Object.keys(problem.errors ?? {})).toEqual([field]);
    if (field.endsWith('attribute')) expect(problem.errors![field]![0]).toMatch(/allowed: |Required/);
  });

  it('names the allowed attributes and operators', async () => {
    const attribute = await searchProblem({ filters: [{ attribute: 'secret', operator: 'eq', value: 1 }] });
    await expectProblem(attribute, 400, {
      errors: {
        'filters.0.attribute': [
          'Unknown filter attribute "secret"; allowed: id, partyId, groupId, email, firstName, lastName, created, lastModified',
        ],
      },
    });
    const operator = await searchProblem({ filters: [{ attribute: 'id', operator: 'between', value: 1 }] });
    await expectProblem(operator, 400, {
      errors: {
        'filters.0.operator': [
          'Unknown operator "between"; allowed: eq, ne, lt, lte, gt, gte, contains, startsWith, in, isNull',
        ],
      },
    });
  });

  it.each([
    [
      'a string for an integer',
      { attribute: 'id', operator: 'eq', value: 'abc' },
      'must be a 32-bit whole number',
    ],
    [
      'a numeric string for an integer',
      { attribute: 'id', operator: 'eq', value: '1' },
      'must be a 32-bit whole number',
    ],
    [
      'a fraction for an integer',
      { attribute: 'id', operator: 'gt', value: 1.5 },
      'must be a 32-bit whole number',
    ],
    [
      '2^31 for an integer',
      { attribute: 'id', operator: 'lt', value: 2147483648 },
      'must be a 32-bit whole number',
    ],
    [
      '1e308 for an integer',
      { attribute: 'partyId', operator: 'eq', value: 1e308 },
      'must be a 32-bit whole number',
    ],
    [
      'a boolean for an integer',
      { attribute: 'id', operator: 'eq', value: true },
      'must be a 32-bit whole number',
    ],
    ['a number for a string', { attribute: 'email', operator: 'eq', value: 5 }, 'must be a string'],
    ['a number for contains', { attribute: 'email', operator: 'contains', value: 5 }, 'must be a string'],
    [
      'contains on an integer',
      { attribute: 'id', operator: 'contains', value: '1' },
      'contains applies to text attributes only',
    ],
    [
      'startsWith on a timestamp',
      { attribute: 'created', operator: 'startsWith', value: '2025' },
      'startsWith applies to text attributes only',
    ],
    [
      'a non-date for a timestamp',
      { attribute: 'created', operator: 'gt', value: 'yesterday' },
      'must be an ISO 8601 timestamp',
    ],
    [
      'a bare number string for a timestamp',
      { attribute: 'created', operator: 'gt', value: '1' },
      'must be an ISO 8601 timestamp',
    ],
    [
      'February 30th',
      { attribute: 'created', operator: 'lt', value: '2025-02-30' },
      'must be an ISO 8601 timestamp',
    ],
    [
      'hour 24',
      { attribute: 'created', operator: 'lt', value: '2025-01-01T24:00:00Z' },
      'must be an ISO 8601 timestamp',
    ],
    [
      'a six-digit year',
      { attribute: 'created', operator: 'lt', value: '+275760-09-13T00:00:00Z' },
      'must be an ISO 8601 timestamp',
    ],
    [
      'year 0',
      { attribute: 'created', operator: 'lt', value: '0000-01-01' },
      'must be an ISO 8601 timestamp',
    ],
    [
      'a number for a timestamp',
      { attribute: 'created', operator: 'lt', value: 1735689600000 },
      'must be an ISO 8601 timestamp',
    ],
    ['null for lt', { attribute: 'id', operator: 'lt', value: null }, 'lt cannot compare with null'],
    ['a list for eq', { attribute: 'id', operator: 'eq', value: [1, 2] }, 'eq takes a single value'],
    ['no value for gt', { attribute: 'id', operator: 'gt' }, 'gt takes a single value'],
    ['a scalar for in', { attribute: 'id', operator: 'in', value: 1 }, 'in takes a non-empty array'],
    ['an empty list for in', { attribute: 'id', operator: 'in', value: [] }, 'in takes a non-empty array'],
    [
      'a wrong type in an in list',
      { attribute: 'id', operator: 'in', value: [1, 'two'] },
      'every element must be a 32-bit whole number',
    ],
    [
      'a string for isNull',
      { attribute: 'firstName', operator: 'isNull', value: 'yes' },
      'isNull takes true, false or no value',
    ],
  ])('refuses %s with a 400 naming filters.N.value', async (_label, filter, message) => {
    const response = await searchProblem({ filters: [inPool(), filter] });
    await expectProblem(response, 400, {
      detail: 'Invalid search: filters.1.value',
      errors: { 'filters.1.value': [message] },
    });
  });

  it('names every bad filter at once', async () => {
    const response = await searchProblem({
      filters: [
        { attribute: 'id', operator: 'eq', value: 'x' },
        inPool(),
        { attribute: 'email', operator: 'gt', value: 3 },
      ],
    });
    await expectProblem(response, 400, {
      errors: {
        'filters.0.value': ['must be a 32-bit whole number'],
        'filters.2.value': ['must be a string'],
      },
    });
  });
});

describe('batch reads: { ids } → a plain array', () => {
  const batch = (body: unknown, token = tokens.admin) =>
    api.fetch('/api/accounts/batch', { method: 'POST', token, json: body });

  it('answers the accounts in the order asked, as a plain array', async () => {
    const response = await batch({ ids: poolIds(3, 1, 2) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Account[];
    expect(Array.isArray(body)).toBe(true);
    expect(emails(body)).toEqual(['bulk-03@pool.example', 'bulk-01@pool.example', 'bulk-02@pool.example']);
  });

  it('answers an id asked twice once', async () => {
    const response = await batch({ ids: poolIds(2, 2, 1) });
    expect(response.status).toBe(200);
    expect(emails((await response.json()) as Account[])).toEqual([
      'bulk-02@pool.example',
      'bulk-01@pool.example',
    ]);
  });

  it('leaves out ids outside the scope, unknown ids and deleted accounts', async () => {
    const response = await batch({ ids: [ids.other, ids.tenant1, 999999, ids.acme, ids.gone] }, tokens.acme);
    expect(response.status).toBe(200);
    expect(emails((await response.json()) as Account[])).toEqual([
      'tenant-1@acme.example',
      'boss@acme.example',
    ]);
    const deleted = await batch({ ids: [ids.poolDeleted, pool[0]!.id] });
    expect(emails((await deleted.json()) as Account[])).toEqual(['bulk-01@pool.example']);
  });

  it('is an empty array when nothing is visible', async () => {
    const response = await batch({ ids: [ids.other] }, tokens.tenant);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
  });

  it('takes 100 ids', async () => {
    const response = await batch({ ids: Array.from({ length: 100 }, (_, i) => i + 1) });
    expect(response.status).toBe(200);
    expect(((await response.json()) as Account[]).length).toBeGreaterThan(30);
  });

  it.each([
    ['an empty list', { ids: [] }, 'ids'],
    ['101 ids', { ids: Array.from({ length: 101 }, (_, i) => i + 1) }, 'ids'],
    ['a fraction', { ids: [1, 1.5] }, 'ids.1'],
    ['a numeric string', { ids: ['1'] }, 'ids.0'],
    ['a word', { ids: ['one'] }, 'ids.0'],
    ['a negative id', { ids: [-1] }, 'ids.0'],
    ['zero', { ids: [0] }, 'ids.0'],
    ['2^31', { ids: [2147483648] }, 'ids.0'],
    ['1e308', { ids: [1e308] }, 'ids.0'],
    ['null in the list', { ids: [null] }, 'ids.0'],
    ['a nested list', { ids: [[1]] }, 'ids.0'],
    ['a comma-separated string', { ids: '1,2' }, 'ids'],
    ['null', { ids: null }, 'ids'],
    ['a single id', { ids: 1 }, 'ids'],
  ])('refuses %s with a 400 naming %s', async (_label, body, field) => {
    const problem = await expectProblem(await batch(body), 400, { detail: `Invalid body: ${field}` });
    expect(Object.keys(problem.errors!)).toEqual([field]);
  });

  it('says "Required" for a missing ids and names unknown fields', async () => {
    await expectProblem(await batch({}), 400, { errors: { ids: ['Required'] } });
    await expectProblem(await batch({ ids: [1], patch: {} }), 400, { errors: { patch: ['Unknown field'] } });
  });
});

describe('scope of data (docs/api.md#scope-of-data)', () => {
  const allEmails = async (token: string) =>
    emails(await list('?PageSize=100&SortByAttributeName=email', token));

  it('Admin sees every live account', async () => {
    const [row] = await api.deps
      .knex('accounts')
      .whereNull('deleted')
      .count<{ count: string }[]>({ count: '*' });
    const page = await list('?PageSize=100', tokens.admin);
    expect(page.totalCount).toBe(Number(row?.count));
    expect(emails(page)).toEqual(expect.arrayContaining(['boss@other.example', 'gone@acme.example']));
    expect(emails(page)).not.toContain('bulk-deleted@pool.example');
    const read = await api.fetch(`/api/accounts/${ids.other}`, { token: tokens.admin });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ email: 'boss@other.example' });
  });

  it('a Property Management Company sees its party and the live parties it manages', async () => {
    expect(await allEmails(tokens.acme)).toEqual([
      'boss@acme.example',
      'tenant-1@acme.example',
      'tenant-2@acme.example',
    ]);
    const found = await search(
      { filters: [{ attribute: 'email', operator: 'contains', value: 'example' }] },
      '',
      tokens.acme,
    );
    expect(found.totalCount).toBe(3);
    const managed = await api.fetch(`/api/accounts/${ids.tenant2}`, { token: tokens.acme });
    expect(managed.status).toBe(200);
    expect(await managed.json()).toMatchObject({ email: 'tenant-2@acme.example' });
  });

  it('another company sees only its own party', async () => {
    expect(await allEmails(tokens.other)).toEqual(['boss@other.example']);
    expect(await allEmails(tokens.pool)).toHaveLength(25);
  });

  it('a User (party type 7) sees only its own account, even of its own party', async () => {
    expect(await allEmails(tokens.tenant)).toEqual(['tenant-1@acme.example']);
    const found = await search(
      { filters: [{ attribute: 'partyId', operator: 'gte', value: 1 }] },
      '',
      tokens.tenant,
    );
    expect(emails(found)).toEqual(['tenant-1@acme.example']);
    const batch = await api.fetch('/api/accounts/batch', {
      method: 'POST',
      token: tokens.tenant,
      json: { ids: [ids.tenant2, ids.tenant1, ids.acme] },
    });
    expect(emails((await batch.json()) as Account[])).toEqual(['tenant-1@acme.example']);
    const own = await api.fetch(`/api/accounts/${ids.tenant1}`, { token: tokens.tenant });
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({ email: 'tenant-1@acme.example' });
  });

  it.each([
    ['a User reading its party mate', 'tenant', 'tenant2'],
    ['a User reading its managing company', 'tenant', 'acme'],
    ['a company reading another company', 'other', 'acme'],
    ['a company reading its managed party once deleted', 'acme', 'gone'],
    ['a managed company reading up', 'pool', 'admin'],
    ['anyone reading a deleted account', 'admin', 'poolDeleted'],
  ] as const)('answers 404 for %s', async (_label, who, target) => {
    const response = await api.fetch(`/api/accounts/${ids[target]}`, { token: tokens[who] });
    await expectProblem(response, 404, { detail: `Account ${ids[target]} was not found` });
  });
});
