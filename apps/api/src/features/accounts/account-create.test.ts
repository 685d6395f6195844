/** POST /api/accounts (docs/decisions.md#accounts): who may create accounts where, and the rules of a new account. */
import { PartyType, type AccountRead } from '@platform/shared';
import { decodeJwt } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import {
  buildAccount,
  buildGroup,
  buildParty,
  expectAccessRules,
  login,
  type WorldParty,
  useTestApi,
} from '../../../tests/support/api';
import { accountRowOf, databaseSnapshot, groupOf } from '../../../tests/support/accounts';

const { api, world } = useTestApi({ world: true });
/** The account group of each world party's full account, by party id. */
const groups = new Map<number, number>();
let counter = 0;
const uniqueEmail = (prefix = 'new') => `${prefix}-${++counter}@create.example`;

beforeAll(async () => {
  for (const party of Object.values(world)) groups.set(party.id, await groupOf(api, party.full.id));
});

const create = (token: string, body: unknown) =>
  api.fetch('/api/accounts', { method: 'POST', token, json: body });
const validBody = (party: WorldParty, extra: Record<string, unknown> = {}) => ({
  partyId: party.id,
  groupId: groups.get(party.id),
  email: uniqueEmail(),
  ...extra,
});

describe('access rules', () => {
  it('allows Admin and Property Management Company holding Account.Create', async () => {
    await expectAccessRules(api, world, {
      method: 'POST',
      path: '/api/accounts',
      body: (caller: WorldParty) => validBody(caller),
      allow: [PartyType.Admin, PartyType.PropertyManagementCompany],
      permission: 'Account.Create',
    });
  });
});

describe('success', () => {
  it('an Admin creates an account in any party; with a password it must change it at first login', async () => {
    const email = uniqueEmail('admin-made');
    const body = validBody(world.otherPmc, {
      email,
      firstName: 'Ada',
      lastName: 'Lovelace',
      password: 'Initial-Pass-1',
    });
    const account = await readJson<AccountRead>(await create(world.admin.full.token, body));
    expect(account).toEqual({
      id: expect.any(Number),
      partyId: world.otherPmc.id,
      groupId: groups.get(world.otherPmc.id),
      email,
      firstName: 'Ada',
      lastName: 'Lovelace',
      mustChangePassword: true,
      multiFactorEnabled: false,
      created: api.clock.now().toISOString(),
      lastModified: null,
      deleted: null,
    });
    const row = await accountRowOf(api, account.id);
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    expect(row.must_change_password).toBe(true);
    // the first login gets only the change-password scope
    const tokens = await login(api, email, 'Initial-Pass-1');
    expect(decodeJwt(tokens.accessToken).scope).toBe('change-password');
    // and it is readable as any account
    const read = await api.fetch(`/api/accounts/${account.id}`, { token: world.otherPmc.full.token });
    expect(await readJson(read)).toEqual(account);
  });

  it('a Property Management Company creates accounts in its own party and in the parties it manages', async () => {
    for (const target of [world.pmc, world.user, world.contractor]) {
      const account = await readJson<AccountRead>(await create(world.pmc.full.token, validBody(target)));
      expect(account).toMatchObject({
        partyId: target.id,
        groupId: groups.get(target.id),
        mustChangePassword: false,
      });
    }
  });

  it('without a password the account has none (it sets one through recovery) and cannot log in', async () => {
    const email = uniqueEmail('no-password');
    const account = await readJson<AccountRead>(
      await create(world.pmc.full.token, validBody(world.user, { email })),
    );
    const row = await accountRowOf(api, account.id);
    expect(row.password_hash).toBeNull();
    expect(row.must_change_password).toBe(false);
    const refused = await api.fetch('/api/auth/login', {
      method: 'POST',
      json: { email, password: 'Anything-123' },
    });
    expect(refused.status).toBe(400);
  });

  it('trims the email and the names, keeps the email’s case and leaves absent names null', async () => {
    const account = await readJson<AccountRead>(
      await create(world.admin.full.token, {
        partyId: world.pmc.id,
        groupId: groups.get(world.pmc.id),
        email: '  Mixed.Case@Create.Example ',
        firstName: '  Grace ',
      }),
    );
    expect(account).toMatchObject({ email: 'Mixed.Case@Create.Example', firstName: 'Grace', lastName: null });
  });

  it('reuses the email of a deleted account', async () => {
    const old = await buildAccount(api.deps, { partyId: world.pmc.id, email: uniqueEmail('reused') });
    await api.deps.knex('accounts').where({ id: old.id }).update({ deleted: api.clock.now() });
    const account = await readJson<AccountRead>(
      await create(world.pmc.full.token, validBody(world.pmc, { email: old.email.toUpperCase() })),
    );
    expect(account.id).not.toBe(old.id);
  });
});

describe('scope: the party must be within the caller’s scope (404, nothing written)', () => {
  it.each([
    ['another company', 'otherPmc'],
    ['a party managed by another company', 'otherUser'],
    ['the Admin party', 'admin'],
    ['an unrelated insurer', 'insurer'],
  ] as const)('a company creating in %s', async (_label, target) => {
    const before = await databaseSnapshot(api);
    await expectProblem(await create(world.pmc.full.token, validBody(world[target])), 404, {
      detail: `Party ${world[target].id} was not found`,
    });
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it('an unknown or deleted party, even for the Admin', async () => {
    const gone = await buildParty(api.deps, { type: PartyType.Contractor });
    const goneGroup = await buildGroup(api.deps, gone.id);
    await api.deps.knex('parties').where({ id: gone.id }).update({ deleted: api.clock.now() });
    const before = await databaseSnapshot(api);
    await expectProblem(
      await create(world.admin.full.token, { partyId: gone.id, groupId: goneGroup, email: uniqueEmail() }),
      404,
      { detail: `Party ${gone.id} was not found` },
    );
    await expectProblem(
      await create(world.admin.full.token, { partyId: 999999, groupId: goneGroup, email: uniqueEmail() }),
      404,
      { detail: 'Party 999999 was not found' },
    );
    expect(await databaseSnapshot(api)).toEqual(before);
  });
});

describe('rules of a new account', () => {
  it('refuses a group of another party or a deleted group with a 400 naming groupId', async () => {
    const deletedGroup = await buildGroup(api.deps, world.pmc.id);
    await api.deps.knex('account_groups').where({ id: deletedGroup }).update({ deleted: api.clock.now() });
    const before = await databaseSnapshot(api);
    for (const groupId of [groups.get(world.otherPmc.id), deletedGroup, 999999]) {
      await expectProblem(
        await create(world.pmc.full.token, { partyId: world.pmc.id, groupId, email: uniqueEmail() }),
        400,
        { errors: { groupId: [`Account group ${groupId} is not a live group of party ${world.pmc.id}`] } },
      );
    }
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it('refuses an email a live account has, compared case-insensitively, with a 409', async () => {
    const before = await databaseSnapshot(api);
    const taken = world.otherUser.full.email;
    const response = await create(
      world.pmc.full.token,
      validBody(world.pmc, { email: ` ${taken.toUpperCase()}` }),
    );
    await expectProblem(response, 409, {
      detail: `An account with the email ${taken.toUpperCase()} already exists`,
    });
    expect(await databaseSnapshot(api)).toEqual(before);
  });

  it.each([
    ['too short', 'Short-1', 'must be at least 10 characters long'],
    [
      'one character class',
      'alllowercaseletters',
      'must mix at least three of: lower case, upper case, digits, symbols',
    ],
    [
      'two character classes',
      'lowercase123456',
      'must mix at least three of: lower case, upper case, digits, symbols',
    ],
  ])('refuses a weak password (%s) with a 400 naming the rule', async (_label, password, rule) => {
    const before = await databaseSnapshot(api);
    await expectProblem(await create(world.admin.full.token, validBody(world.pmc, { password })), 400, {
      detail: `password: ${rule}`,
      errors: { password: [rule] },
    });
    expect(await databaseSnapshot(api)).toEqual(before);
  });
});

describe('bad input: 400 naming the field, nothing written', () => {
  it.each([
    ['no email', { email: undefined }, 'email'],
    ['an email that is not one', { email: 'not-an-email' }, 'email'],
    ['an email over 254 characters', { email: `${'a'.repeat(250)}@x.example` }, 'email'],
    ['a string partyId', { partyId: '1' }, 'partyId'],
    ['no groupId', { groupId: undefined }, 'groupId'],
    ['a zero groupId', { groupId: 0 }, 'groupId'],
    ['an empty first name', { firstName: '  ' }, 'firstName'],
    ['a last name over 100 characters', { lastName: 'x'.repeat(101) }, 'lastName'],
    ['a numeric password', { password: 1234567890 }, 'password'],
    ['an unknown field', { role: 'admin' }, 'role'],
    ['the read-only mustChangePassword', { mustChangePassword: false }, 'mustChangePassword'],
  ])('%s', async (_label, change, field) => {
    const before = await databaseSnapshot(api);
    const problem = await expectProblem(
      await create(world.admin.full.token, validBody(world.pmc, change)),
      400,
    );
    expect(Object.keys(problem.errors!)).toEqual([field]);
    expect(await databaseSnapshot(api)).toEqual(before);
  });
});
