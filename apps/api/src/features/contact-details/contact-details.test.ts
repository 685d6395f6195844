/**
 * Account contact details (docs/decisions.md#contact-details) over HTTP and real Postgres: the five operations, their
 * access rules, the caller's scope (a detail is visible when its account is), validation per
 * type, and the one-primary-per-type rule.
 */
import {
  ALL_PARTY_TYPES,
  MAX_CONTACT_DETAILS_PER_ACCOUNT,
  PartyType,
  type AccountContactDetailsRead,
} from '@platform/shared';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, writableCounts } from '../../../tests/support/http';
import {
  buildAccount,
  expectAccessRules,
  login,
  type WorldParty,
  useTestApi,
} from '../../../tests/support/api';

const { api, world } = useTestApi({ world: true });
/** One email detail on the `full` account of every world party, by party id. */
const ownDetail = new Map<number, number>();

beforeAll(async () => {
  for (const party of Object.values(world)) {
    ownDetail.set(party.id, await addDetail(party.full.id, { value: `own-${party.id}@example.com` }));
  }
});
// tokens of the world live 15 minutes of the test clock; tests move it by seconds only
beforeEach(() => api.clock.set(new Date()));

/** Inserts a live contact detail straight into the table and answers its id. */
async function addDetail(
  accountId: number,
  detail: { type?: string; value?: string; label?: string | null; isPrimary?: boolean; deleted?: Date } = {},
): Promise<number> {
  const [row] = await api.deps
    .knex('account_contact_details')
    .insert({
      account_id: accountId,
      type: detail.type ?? 'email',
      value: detail.value ?? `${Math.random().toString(36).slice(2, 10)}@example.com`,
      label: detail.label ?? null,
      is_primary: detail.isPrimary ?? false,
      deleted: detail.deleted ?? null,
    })
    .returning('id');
  return row.id as number;
}

async function detailRow(id: number) {
  return api.deps.knex('account_contact_details').where({ id }).first();
}

async function detailCount(): Promise<number> {
  const [row] = await api.deps.knex('account_contact_details').count<{ count: string }[]>({ count: '*' });
  return Number(row?.count);
}

/** Every row of the table, to prove a refused write changed nothing. */
async function snapshot() {
  return api.deps.knex('account_contact_details').orderBy('id');
}

/** The table's rows and the counts of the tables any request could write, for refused reads. */
async function writtenState() {
  return { details: await snapshot(), counts: await writableCounts(api) };
}

const create = (token: string, json: unknown) =>
  api.fetch('/api/account-contact-details', { method: 'POST', token, json });
const patchBatch = (token: string, json: unknown) =>
  api.fetch('/api/account-contact-details/batch', { method: 'PATCH', token, json });
const readBatch = (token: string, ids: unknown) =>
  api.fetch('/api/account-contact-details/batch', { method: 'POST', token, json: { ids } });
const readOne = (token: string, id: number | string, headers?: Record<string, string>) =>
  api.fetch(`/api/account-contact-details/${id}`, { token, headers });

async function listAll(token: string): Promise<AccountContactDetailsRead[]> {
  const items: AccountContactDetailsRead[] = [];
  for (let page = 1; ; page++) {
    const response = await api.fetch(`/api/account-contact-details?PageSize=100&PageNumber=${page}`, {
      token,
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { items: AccountContactDetailsRead[]; hasNextPage: boolean };
    items.push(...body.items);
    if (!body.hasNextPage) return items;
  }
}

describe('POST /api/account-contact-details', () => {
  const email = () => `c-${Math.random().toString(36).slice(2, 10)}@example.com`;

  it('lets party types 1, 2 and 7 with AccountContactDetails.Create call it, and no one else', async () => {
    await expectAccessRules(api, world, {
      method: 'POST',
      path: '/api/account-contact-details',
      body: (caller: WorldParty) => ({ accountId: caller.full.id, type: 'email', value: email() }),
      allow: [PartyType.Admin, PartyType.PropertyManagementCompany, PartyType.User],
      permission: 'AccountContactDetails.Create',
    });
  });

  it('creates a detail on an account of a managed party and answers it as AccountContactDetailsRead', async () => {
    api.clock.advance(1000);
    const response = await create(world.pmc.full.token, {
      accountId: world.user.bare.id,
      type: 'phone',
      value: '  +49 (0)30 123-456 ',
      label: ' Office ',
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as AccountContactDetailsRead;
    expect(body).toEqual({
      id: expect.any(Number),
      accountId: world.user.bare.id,
      type: 'phone',
      value: '+49 (0)30 123-456',
      label: 'Office',
      isPrimary: false,
      created: api.clock.now().toISOString(),
      lastModified: null,
      deleted: null,
    });
    expect(await detailRow(body.id)).toMatchObject({
      account_id: world.user.bare.id,
      value: '+49 (0)30 123-456',
    });
  });

  it('lets an Admin add to any account', async () => {
    const response = await create(world.admin.full.token, {
      accountId: world.otherUser.full.id,
      type: 'website',
      value: 'https://example.com/about',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ accountId: world.otherUser.full.id, type: 'website' });
  });

  it('lets a User add to its own account, even without permissions (Users skip them)', async () => {
    const response = await create(world.user.bare.token, {
      accountId: world.user.bare.id,
      type: 'mobile',
      value: '0171 1234567',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ accountId: world.user.bare.id, type: 'mobile' });
  });

  it('answers 404 for an account out of scope, and writes nothing', async () => {
    const before = await detailCount();
    const cases: [WorldParty, number][] = [
      [world.pmc, world.otherUser.full.id], // managed by another company
      [world.pmc, world.otherPmc.full.id],
      [world.user, world.user.bare.id], // a User only for itself, not for a colleague
      [world.admin, 2147483647], // unknown
    ];
    for (const [caller, accountId] of cases) {
      await expectProblem(
        await create(caller.full.token, { accountId, type: 'email', value: email() }),
        404,
        {
          detail: `Account ${accountId} was not found`,
        },
      );
    }
    expect(await detailCount()).toBe(before);
  });

  it('answers 404 for a deleted account', async () => {
    const [gone] = await api.deps
      .knex('accounts')
      .insert({
        party_id: world.pmc.id,
        group_id: (await api.deps.knex('accounts').where({ id: world.pmc.full.id }).first()).group_id,
        email: email(),
        deleted: new Date(),
      })
      .returning('id');
    await expectProblem(
      await create(world.pmc.full.token, { accountId: gone.id, type: 'email', value: email() }),
      404,
    );
  });

  it('makes the account’s other details of the type non-primary when one is made primary', async () => {
    const account = world.broker.bare.id;
    const oldPrimary = await addDetail(account, { isPrimary: true });
    const otherType = await addDetail(account, { type: 'phone', value: '123456', isPrimary: true });
    const otherAccount = await addDetail(world.broker.full.id, { isPrimary: true });
    api.clock.advance(2000);
    const response = await create(world.admin.full.token, {
      accountId: account,
      type: 'email',
      value: email(),
      isPrimary: true,
    });
    expect(response.status).toBe(200);
    const created = (await response.json()) as AccountContactDetailsRead;
    expect(created.isPrimary).toBe(true);
    expect(await detailRow(oldPrimary)).toMatchObject({ is_primary: false, last_modified: api.clock.now() });
    expect(await detailRow(otherType)).toMatchObject({ is_primary: true, last_modified: null });
    expect(await detailRow(otherAccount)).toMatchObject({ is_primary: true });
  });

  it('leaves one primary per type when several are made primary at once', async () => {
    // a race needs luck to show: several rounds of concurrent creates, each must leave one primary
    const account = world.contractor.bare.id;
    for (const type of ['website', 'fax', 'phone', 'mobile'] as const) {
      const value = type === 'website' ? 'https://example.com' : '030 123456';
      const responses = await Promise.all(
        Array.from({ length: 8 }, () =>
          create(world.pmc.full.token, { accountId: account, type, value, isPrimary: true }),
        ),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
      const primaries = await api.deps
        .knex('account_contact_details')
        .where({ account_id: account, type, is_primary: true });
      expect(primaries).toHaveLength(1);
    }
  });

  it('answers 400 naming every bad field, and writes nothing', async () => {
    const before = await snapshot();
    const token = world.admin.full.token;
    const account = world.pmc.full.id;
    const cases: [unknown, Record<string, unknown>][] = [
      [{ accountId: account, type: 'email', value: 'not-an-email' }, { value: ['Must be an email address'] }],
      [
        { accountId: account, type: 'phone', value: '030 CALL ME' },
        { value: [expect.stringMatching(/digits/)] },
      ],
      [{ accountId: account, type: 'fax', value: '12' }, { value: ['Must hold 3 to 20 digits'] }],
      [
        { accountId: account, type: 'website', value: 'example.com' },
        { value: ['Must be an absolute http(s) URL'] },
      ],
      [
        { accountId: account, type: 'website', value: 'ftp://example.com' },
        { value: ['Must be an http or https URL'] },
      ],
      [
        { accountId: account, type: 'website', value: 'https://me:secret@example.com' },
        { value: [expect.any(String)] },
      ],
      [
        { accountId: account, type: 'email', value: `${'a'.repeat(250)}@x.de` },
        { value: [expect.stringMatching(/at most 254/)] },
      ],
      [{ accountId: account, type: 'email', value: '   ' }, { value: ['Must not be empty'] }],
      [{ accountId: account, type: 'pager', value: '123' }, { type: [expect.any(String)] }],
      [
        { accountId: account, type: 'email', value: 'a@b.de', label: 'x'.repeat(101) },
        { label: [expect.any(String)] },
      ],
      [
        { accountId: account, type: 'email', value: 'a@b.de', isPrimary: 'yes' },
        { isPrimary: [expect.any(String)] },
      ],
      [{ type: 'email', value: 'a@b.de' }, { accountId: ['Required'] }],
      [[], { '(body)': [expect.any(String)] }],
      [
        { accountId: 'me', type: 'email', value: 'nope', colour: 'red' },
        { accountId: [expect.any(String)], value: ['Must be an email address'], colour: ['Unknown field'] },
      ],
    ];
    for (const [body, errors] of cases) {
      await expectProblem(await create(token, body), 400, { errors });
    }
    expect(await snapshot()).toEqual(before);
  });

  it('answers 400 once an account holds the most contact details allowed', async () => {
    const account = world.insurer.bare.id;
    const [counted] = await api.deps
      .knex('account_contact_details')
      .where({ account_id: account })
      .whereNull('deleted')
      .count<{ count: string }[]>({ count: '*' });
    for (let i = Number(counted?.count); i < MAX_CONTACT_DETAILS_PER_ACCOUNT; i++) await addDetail(account);
    // a deleted one does not count
    await addDetail(account, { deleted: new Date() });
    const before = await detailCount();
    await expectProblem(
      await create(world.admin.full.token, { accountId: account, type: 'email', value: email() }),
      400,
      {
        errors: {
          accountId: [`An account holds at most ${MAX_CONTACT_DETAILS_PER_ACCOUNT} contact details`],
        },
      },
    );
    expect(await detailCount()).toBe(before);
  });
});

describe('GET /api/account-contact-details', () => {
  it('lets every party type call it', async () => {
    await expectAccessRules(api, world, {
      method: 'GET',
      path: '/api/account-contact-details',
      allow: ALL_PARTY_TYPES,
    });
  });

  it('lists the details of the accounts each caller can see', async () => {
    const accountIdsSeenBy = async (party: WorldParty) =>
      new Set((await listAll(party.full.token)).map((d) => d.accountId));
    const partyAccounts = (...parties: WorldParty[]) => parties.flatMap((p) => [p.full.id, p.bare.id]);

    const all = await accountIdsSeenBy(world.admin);
    for (const party of Object.values(world)) expect(all).toContain(party.full.id);

    // a company sees its own party and the parties it manages, nothing else
    const pmc = await accountIdsSeenBy(world.pmc);
    for (const party of [world.pmc, world.contractor, world.user, world.broker])
      expect(pmc).toContain(party.full.id);
    for (const id of pmc)
      expect(partyAccounts(world.pmc, world.contractor, world.user, world.broker)).toContain(id);

    // a User sees only its own account's details, not its colleague's
    const own = await addDetail(world.user.full.id);
    const colleague = await addDetail(world.user.bare.id);
    const user = await listAll(world.user.full.token);
    expect(new Set(user.map((d) => d.accountId))).toEqual(new Set([world.user.full.id]));
    expect(user.map((d) => d.id)).toContain(own);
    expect(user.map((d) => d.id)).not.toContain(colleague);

    // a Contractor (managed, manages no one) sees its own party only
    const contractor = await accountIdsSeenBy(world.contractor);
    expect([...contractor].every((id) => partyAccounts(world.contractor).includes(id))).toBe(true);
  });

  it('leaves out deleted details and details of deleted accounts', async () => {
    const deleted = await addDetail(world.poolManager.full.id, { deleted: new Date() });
    const [gone] = await api.deps
      .knex('accounts')
      .insert({
        party_id: world.poolManager.id,
        group_id: (await api.deps.knex('accounts').where({ id: world.poolManager.full.id }).first()).group_id,
        email: `gone-${Date.now()}@example.com`,
        deleted: new Date(),
      })
      .returning('id');
    const ofDeletedAccount = await addDetail(gone.id);
    const ids = (await listAll(world.poolManager.full.token)).map((d) => d.id);
    expect(ids).toContain(ownDetail.get(world.poolManager.id));
    expect(ids).not.toContain(deleted);
    expect(ids).not.toContain(ofDeletedAccount);
  });

  it('pages and sorts by SortByAttributeName / AscendingOrder', async () => {
    const account = world.contractor.bare.id;
    for (const value of ['b@x.de', 'a@x.de', 'c@x.de']) await addDetail(account, { value });
    const token = world.contractor.full.token;
    const response = await api.fetch(
      '/api/account-contact-details?sortByAttributeName=value&AscendingOrder=false&PageSize=2',
      { token },
    );
    expect(response.status).toBe(200);
    const page = (await response.json()) as {
      items: AccountContactDetailsRead[];
      pageSize: number;
      totalCount: number;
      hasNextPage: boolean;
    };
    const everything = await listAll(token);
    const values = everything
      .map((d) => d.value)
      .sort()
      .reverse();
    expect(page.items.map((d) => d.value)).toEqual(values.slice(0, 2));
    expect(page).toMatchObject({ pageSize: 2, totalCount: everything.length, hasNextPage: true });
  });

  it('answers text/plain with the same JSON', async () => {
    const response = await api.fetch('/api/account-contact-details', {
      token: world.user.full.token,
      headers: { accept: 'text/plain' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(JSON.parse(await response.text())).toMatchObject({ items: expect.any(Array), pageNumber: 1 });
  });

  it('answers 400 for an unknown sort attribute or a bad page, and writes nothing', async () => {
    const token = world.pmc.full.token;
    const before = await writtenState();
    await expectProblem(
      await api.fetch('/api/account-contact-details?SortByAttributeName=password', { token }),
      400,
      {
        errors: { SortByAttributeName: [expect.stringMatching(/allowed: id, accountId, type, value/)] },
      },
    );
    await expectProblem(await api.fetch('/api/account-contact-details?PageSize=0', { token }), 400, {
      errors: { PageSize: ['PageSize must be at least 1'] },
    });
    expect(await writtenState()).toEqual(before);
  });
});

describe('POST /api/account-contact-details/batch', () => {
  it('lets every party type call it', async () => {
    await expectAccessRules(api, world, {
      method: 'POST',
      path: '/api/account-contact-details/batch',
      body: (caller: WorldParty) => ({ ids: [ownDetail.get(caller.id)] }),
      allow: ALL_PARTY_TYPES,
    });
  });

  it('answers the visible details in the order asked, once each, leaving out the rest', async () => {
    const mine = ownDetail.get(world.pmc.id)!;
    const managed = ownDetail.get(world.user.id)!;
    const foreign = ownDetail.get(world.otherUser.id)!;
    const response = await readBatch(world.pmc.full.token, [managed, foreign, 2147483647, mine, managed]);
    expect(response.status).toBe(200);
    const body = (await response.json()) as AccountContactDetailsRead[];
    expect(body.map((d) => d.id)).toEqual([managed, mine]);
    expect(body[0]).toMatchObject({ accountId: world.user.full.id, type: 'email' });
  });

  it('gives a User its own account’s details only', async () => {
    const colleague = await addDetail(world.user.bare.id);
    const response = await readBatch(world.user.full.token, [colleague, ownDetail.get(world.user.id)]);
    expect(((await response.json()) as AccountContactDetailsRead[]).map((d) => d.id)).toEqual([
      ownDetail.get(world.user.id),
    ]);
  });

  it('answers text/json with the same JSON', async () => {
    const response = await api.fetch('/api/account-contact-details/batch', {
      method: 'POST',
      token: world.admin.full.token,
      json: { ids: [ownDetail.get(world.admin.id)] },
      headers: { accept: 'text/json' },
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/json/);
    expect(JSON.parse(await response.text())).toHaveLength(1);
  });

  it('answers 400 for bad ids, and writes nothing', async () => {
    const token = world.pmc.full.token;
    const before = await writtenState();
    await expectProblem(await readBatch(token, []), 400, { errors: { ids: [expect.any(String)] } });
    await expectProblem(await readBatch(token, ['1']), 400, { errors: { 'ids.0': [expect.any(String)] } });
    await expectProblem(
      await readBatch(
        token,
        Array.from({ length: 101 }, (_, i) => i + 1),
      ),
      400,
      { errors: { ids: [expect.any(String)] } },
    );
    expect(await writtenState()).toEqual(before);
  });
});

describe('PATCH /api/account-contact-details/batch', () => {
  it('lets party types 1 and 2 with AccountContactDetails.Update call it, and no one else', async () => {
    await expectAccessRules(api, world, {
      method: 'PATCH',
      path: '/api/account-contact-details/batch',
      body: (caller: WorldParty) => ({ ids: [ownDetail.get(caller.id)], patch: { label: 'Access rules' } }),
      allow: [PartyType.Admin, PartyType.PropertyManagementCompany],
      permission: 'AccountContactDetails.Update',
    });
  });

  it('merges the patch into the visible details and answers their ids; out-of-scope ids are never changed', async () => {
    const a = await addDetail(world.user.full.id, { label: 'Home' });
    const b = await addDetail(world.contractor.full.id, { label: 'Work' });
    const foreign = await addDetail(world.otherUser.full.id, { label: 'Theirs' });
    const foreignBefore = await detailRow(foreign);
    api.clock.advance(3000);
    const response = await patchBatch(world.pmc.full.token, {
      ids: [b, foreign, a, b],
      patch: { Value: 'new@example.com' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([b, a]);
    // absent fields are left as they were
    expect(await detailRow(a)).toMatchObject({
      value: 'new@example.com',
      label: 'Home',
      last_modified: api.clock.now(),
    });
    expect(await detailRow(b)).toMatchObject({ value: 'new@example.com', label: 'Work' });
    expect(await detailRow(foreign)).toEqual(foreignBefore);
    const read = (await (await readOne(world.pmc.full.token, a)).json()) as AccountContactDetailsRead;
    expect(read).toMatchObject({ value: 'new@example.com', lastModified: api.clock.now().toISOString() });
  });

  it('clears the label with null', async () => {
    const id = await addDetail(world.pmc.bare.id, { label: 'Old' });
    const response = await patchBatch(world.pmc.full.token, { ids: [id], patch: { label: null } });
    expect(await response.json()).toEqual([id]);
    expect(await detailRow(id)).toMatchObject({ label: null });
  });

  it('changes the type when the value suits it', async () => {
    const id = await addDetail(world.pmc.bare.id, { type: 'phone', value: '030 1234' });
    const response = await patchBatch(world.admin.full.token, { ids: [id], patch: { type: 'fax' } });
    expect(await response.json()).toEqual([id]);
    expect(await detailRow(id)).toMatchObject({ type: 'fax', value: '030 1234' });
  });

  it('answers an empty array when no id is in scope', async () => {
    const foreign = ownDetail.get(world.otherPmc.id)!;
    const before = await detailRow(foreign);
    const response = await patchBatch(world.pmc.full.token, {
      ids: [foreign, 2147483647],
      patch: { label: 'x' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
    expect(await detailRow(foreign)).toEqual(before);
  });

  it('makes the account’s other details of the type non-primary', async () => {
    const account = world.broker.full.id;
    const old = await addDetail(account, { type: 'mobile', value: '0171 111', isPrimary: true });
    const next = await addDetail(account, { type: 'mobile', value: '0171 222' });
    const phone = await addDetail(account, { type: 'phone', value: '030 333', isPrimary: true });
    const response = await patchBatch(world.pmc.full.token, { ids: [next], patch: { isPrimary: true } });
    expect(await response.json()).toEqual([next]);
    expect(await detailRow(next)).toMatchObject({ is_primary: true });
    expect(await detailRow(old)).toMatchObject({ is_primary: false });
    expect(await detailRow(phone)).toMatchObject({ is_primary: true });
  });

  it('keeps a primary detail primary across a type change, demoting the new type’s primary', async () => {
    const account = world.pmc.bare.id;
    const phone = await addDetail(account, { type: 'phone', value: '030 999', isPrimary: true });
    const mobile = await addDetail(account, { type: 'mobile', value: '0171 999', isPrimary: true });
    const response = await patchBatch(world.pmc.full.token, { ids: [phone], patch: { type: 'mobile' } });
    expect(await response.json()).toEqual([phone]);
    expect(await detailRow(phone)).toMatchObject({ type: 'mobile', is_primary: true });
    expect(await detailRow(mobile)).toMatchObject({ is_primary: false });
  });

  it('refuses two primaries of one account and type with 400, and writes nothing', async () => {
    const account = world.broker.bare.id;
    const one = await addDetail(account, { type: 'fax', value: '040 111' });
    const two = await addDetail(account, { type: 'fax', value: '040 222' });
    const before = await snapshot();
    await expectProblem(
      await patchBatch(world.admin.full.token, { ids: [one, two], patch: { isPrimary: true } }),
      400,
      {
        errors: { 'patch.isPrimary': ['At most one contact detail per account and type can be primary'] },
      },
    );
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a patch that does not fit one of the details with 400, and writes nothing', async () => {
    const email = await addDetail(world.pmc.full.id, { value: 'fits@example.com' });
    const phone = await addDetail(world.pmc.full.id, { type: 'phone', value: '0301234' });
    const before = await snapshot();
    // the new type does not suit the phone number's value
    await expectProblem(
      await patchBatch(world.pmc.full.token, { ids: [email, phone], patch: { type: 'email' } }),
      400,
      {
        errors: { 'patch.type': [`Contact detail ${phone}: Must be an email address`] },
      },
    );
    // the new value does not suit the phone's type
    await expectProblem(
      await patchBatch(world.pmc.full.token, { ids: [email, phone], patch: { value: 'x@y.de' } }),
      400,
      {
        errors: { 'patch.value': [expect.stringContaining(`Contact detail ${phone}:`)] },
      },
    );
    expect(await snapshot()).toEqual(before);
  });

  it('answers 400 for a bad body, and writes nothing', async () => {
    const id = ownDetail.get(world.pmc.id)!;
    const token = world.pmc.full.token;
    const before = await snapshot();
    const cases: [unknown, Record<string, unknown>][] = [
      [{ ids: [id], patch: {} }, { patch: ['Must change at least one field'] }],
      [{ ids: [id], patch: { type: null } }, { 'patch.type': [expect.any(String)] }],
      [{ ids: [id], patch: { value: null } }, { 'patch.value': [expect.any(String)] }],
      [{ ids: [id], patch: { accountId: 1 } }, { 'patch.accountId': ['Unknown field'] }],
      [
        { ids: [id], patch: { type: 'email', value: '030 123' } },
        { 'patch.value': ['Must be an email address'] },
      ],
      [{ ids: [], patch: { label: 'x' } }, { ids: [expect.any(String)] }],
      [{ ids: [id] }, { patch: ['Required'] }],
      [{ ids: [id], patch: 'label' }, { patch: [expect.any(String)] }],
      [{ ids: [id], patch: null }, { patch: [expect.any(String)] }],
    ];
    for (const [body, errors] of cases) await expectProblem(await patchBatch(token, body), 400, { errors });
    expect(await snapshot()).toEqual(before);
  });
});

describe('GET /api/account-contact-details/{id}', () => {
  it('lets every party type call it', async () => {
    await expectAccessRules(api, world, {
      method: 'GET',
      path: (caller: WorldParty) => `/api/account-contact-details/${ownDetail.get(caller.id)}`,
      allow: ALL_PARTY_TYPES,
    });
  });

  it('answers every party its own details and a company those of the parties it manages', async () => {
    for (const party of Object.values(world)) {
      const response = await readOne(party.full.token, ownDetail.get(party.id)!);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ id: ownDetail.get(party.id), accountId: party.full.id });
    }
    const managed = await readOne(world.pmc.full.token, ownDetail.get(world.user.id)!);
    expect(managed.status).toBe(200);
    const admin = await readOne(world.admin.full.token, ownDetail.get(world.otherUser.id)!);
    expect(admin.status).toBe(200);
  });

  it('answers 404 for a detail out of scope, unknown or deleted', async () => {
    const deleted = await addDetail(world.pmc.full.id, { deleted: new Date() });
    const colleague = await addDetail(world.user.bare.id);
    const cases: [WorldParty, number][] = [
      [world.pmc, ownDetail.get(world.otherUser.id)!],
      [world.pmc, ownDetail.get(world.otherPmc.id)!],
      [world.contractor, ownDetail.get(world.pmc.id)!], // managed parties do not see their manager
      [world.user, colleague],
      [world.pmc, deleted],
      [world.admin, 2147483647],
    ];
    for (const [caller, id] of cases) {
      await expectProblem(await readOne(caller.full.token, id), 404, {
        detail: `Account contact detail ${id} was not found`,
      });
    }
  });

  it('answers text/plain with the same JSON', async () => {
    const response = await readOne(world.user.full.token, ownDetail.get(world.user.id)!, {
      accept: 'text/plain',
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(JSON.parse(await response.text())).toMatchObject({ id: ownDetail.get(world.user.id) });
  });

  it('answers 400 for an id that is not a positive int32, and writes nothing', async () => {
    const before = await writtenState();
    for (const id of ['abc', '0', '2147483648']) {
      await expectProblem(await readOne(world.pmc.full.token, id), 400, {
        errors: { id: [expect.any(String)] },
      });
    }
    expect(await writtenState()).toEqual(before);
  });
});

describe('a change-password token (docs/api.md#scopes)', () => {
  it('reaches none of the five operations (403), and writes nothing', async () => {
    const forced = await buildAccount(api.deps, { partyId: world.pmc.id, mustChangePassword: true });
    const { accessToken: token } = await login(api, forced.email);
    const own = await addDetail(forced.id);
    const before = await writtenState();
    for (const [method, path, json] of [
      ['POST', '/api/account-contact-details', { accountId: forced.id, type: 'email', value: 'a@b.de' }],
      ['GET', '/api/account-contact-details', undefined],
      ['POST', '/api/account-contact-details/batch', { ids: [own] }],
      ['PATCH', '/api/account-contact-details/batch', { ids: [own], patch: { label: 'x' } }],
      ['GET', `/api/account-contact-details/${own}`, undefined],
    ] as const) {
      await expectProblem(await api.fetch(path, { method, token, json }), 403, {
        detail: 'A token with scope "change-password" cannot call this operation',
      });
    }
    expect(await writtenState()).toEqual(before);
  });
});
