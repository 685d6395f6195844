import { WebhookState, type EntranceRead, type UnitContractRead, type UnitRead } from '@platform/shared';
import { decodeJwt } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, writableCounts } from '../../tests/support/http';
import { buildAccount, buildParty, login, useTestApi } from '../../tests/support/api';
import {
  capturedChanges,
  countRows,
  expectRolledBack,
  expectOutOfScope,
  expectRegistryAccessRules,
  lastChangeId,
  patchOk,
  postOk,
  resetCapture,
  subscribe,
  webhookRows,
  expectDeleted,
} from '../../tests/support/resources';

const { api, world } = useTestApi({ world: true });
let sequence = 0;
/** A fresh suffix, since entrance names and unit numbers are unique within a property. */
const next = () => ++sequence;

const pmcToken = () => world.pmc.full.token;

function newProperty(token = pmcToken(), overrides: Record<string, unknown> = {}) {
  return postOk<{ id: number; partyId: number }>(api, '/api/properties', token, {
    name: `House ${next()}`,
    street: 'Lindenstraße',
    postalCode: '10969',
    city: 'Berlin',
    ...overrides,
  });
}

function newEntrance(propertyId: number, token = pmcToken(), overrides: Record<string, unknown> = {}) {
  return postOk<EntranceRead>(api, '/api/entrances', token, {
    propertyId,
    name: `Aufgang ${next()}`,
    ...overrides,
  });
}

function newUnit(propertyId: number, token = pmcToken(), overrides: Record<string, unknown> = {}) {
  return postOk<UnitRead>(api, '/api/units', token, { propertyId, number: `WE ${next()}`, ...overrides });
}

function newContract(unitId: number, token = pmcToken(), overrides: Record<string, unknown> = {}) {
  return postOk<UnitContractRead>(api, '/api/unit-contracts', token, {
    unitId,
    contractType: 'tenancy',
    startDate: '2025-01-01',
    ...overrides,
  });
}

/** Every table a refused real-estate write could have touched, with the identity tables. */
async function allCounts() {
  return {
    ...(await writableCounts(api)),
    entrances: await countRows(api, 'entrances'),
    units: await countRows(api, 'units'),
    unit_contracts: await countRows(api, 'unit_contracts'),
    entity_changes: await countRows(api, 'entity_changes'),
    webhooks: await countRows(api, 'webhooks'),
  };
}

async function expectFieldErrors(cases: (readonly [path: string, body: unknown, field: string])[]) {
  for (const [path, body, field] of cases) {
    const method = path.match(/\/\d+$/) ? 'PATCH' : 'POST';
    const problem = await expectProblem(
      await api.fetch(path, { method, token: pmcToken(), json: body }),
      400,
    );
    expect(problem.errors, `${method} ${path} ${JSON.stringify(body)}`).toHaveProperty([field]);
  }
}

beforeEach(() => resetCapture(api));

describe('Entrance', () => {
  it('creates, reads, lists, searches, batch-reads, updates and deletes', async () => {
    const token = pmcToken();
    const property = await newProperty();
    const created = await newEntrance(property.id, token, {
      name: 'Aufgang B',
      street: 'Nebenweg',
      houseNumber: '3',
      postalCode: '10970',
      city: 'Berlin',
    });
    expect(created).toEqual({
      id: expect.any(Number),
      created: expect.any(String),
      lastModified: null,
      deleted: null,
      partyId: world.pmc.id,
      propertyId: property.id,
      name: 'Aufgang B',
      street: 'Nebenweg',
      houseNumber: '3',
      postalCode: '10970',
      city: 'Berlin',
      notes: null,
    });
    const other = await newEntrance(property.id, token, { name: 'Aufgang A' });

    expect(await (await api.fetch(`/api/entrances/${created.id}`, { token })).json()).toEqual(created);

    const list = (await (
      await api.fetch('/api/entrances?SortByAttributeName=name&PageSize=100', { token })
    ).json()) as { items: EntranceRead[] };
    const ours = list.items.filter((e) => e.propertyId === property.id).map((e) => e.id);
    expect(ours).toEqual([other.id, created.id]);

    const search = await postOk<{ items: EntranceRead[]; totalCount: number }>(
      api,
      '/api/entrances/search',
      token,
      {
        filters: [
          { attribute: 'propertyId', operator: 'eq', value: property.id },
          { attribute: 'street', operator: 'contains', value: 'neben' },
        ],
      },
    );
    expect(search.items).toEqual([created]);
    expect(search.totalCount).toBe(1);

    const batch = await postOk<EntranceRead[]>(api, '/api/entrances/batch', token, {
      ids: [other.id, created.id],
    });
    expect(batch.map((e) => e.id)).toEqual([other.id, created.id]);

    const patched = await patchOk<EntranceRead>(api, `/api/entrances/${created.id}`, token, {
      city: 'Potsdam',
      street: null,
    });
    expect(patched).toMatchObject({ city: 'Potsdam', street: null, name: 'Aufgang B' });
    expect(patched.lastModified).not.toBeNull();

    await expectDeleted(api, `/api/entrances/${created.id}`, token);
  });

  it('applies the access rules of every operation', async () => {
    const property = await newProperty();
    await expectRegistryAccessRules(api, world, '/api/entrances', 'Entrance', {
      body: () => ({ propertyId: property.id, name: `Aufgang ${next()}` }),
      patch: { notes: 'Lift out of order' },
    });
  });

  it('scopes reads and writes to the caller’s parties (out of scope = 404)', async () => {
    const token = pmcToken();
    const foreignProperty = await newProperty(world.otherPmc.full.token);
    const foreign = await newEntrance(foreignProperty.id, world.otherPmc.full.token);
    const managedProperty = await newProperty(world.admin.full.token, { partyId: world.user.id });
    const managed = await newEntrance(managedProperty.id, world.admin.full.token, { partyId: world.user.id });

    expect((await api.fetch(`/api/entrances/${managed.id}`, { token })).status).toBe(200);
    await expectOutOfScope(api, '/api/entrances', token, foreign.id, {
      patch: { city: 'X' },
      visible: [managed.id],
    });
    // the User party sees its own entrance, not the PMC's
    expect((await api.fetch(`/api/entrances/${managed.id}`, { token: world.user.full.token })).status).toBe(
      200,
    );
    const pmcEntrance = await newEntrance((await newProperty()).id);
    expect(
      (await api.fetch(`/api/entrances/${pmcEntrance.id}`, { token: world.user.full.token })).status,
    ).toBe(404);
    // an entrance of a property the caller cannot see is refused, naming propertyId
    await expectFieldErrors([
      ['/api/entrances', { propertyId: foreignProperty.id, name: 'Sneaky' }, 'propertyId'],
      [
        '/api/entrances',
        { propertyId: foreignProperty.id, name: 'X', partyId: world.otherPmc.id },
        'partyId',
      ],
    ]);
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const property = await newProperty();
    const entrance = await newEntrance(property.id);
    const before = await allCounts();
    await expectFieldErrors([
      ['/api/entrances', { propertyId: property.id, name: '' }, 'name'],
      ['/api/entrances', { propertyId: property.id, name: '   ' }, 'name'],
      ['/api/entrances', { propertyId: property.id, name: 'x'.repeat(101) }, 'name'],
      ['/api/entrances', { name: 'No property' }, 'propertyId'],
      ['/api/entrances', { propertyId: 'one', name: 'A' }, 'propertyId'],
      ['/api/entrances', { propertyId: 2147483647, name: 'A' }, 'propertyId'],
      ['/api/entrances', { propertyId: property.id, name: 'A', postalCode: '1'.repeat(21) }, 'postalCode'],
      ['/api/entrances', { propertyId: property.id, name: 'A', floors: 4 }, 'floors'],
      [`/api/entrances/${entrance.id}`, { name: null }, 'name'],
      [`/api/entrances/${entrance.id}`, { partyId: world.pmc.id }, 'partyId'],
    ]);
    expect(await allCounts()).toEqual(before);
  });

  it('keeps names unique within a property and entrances with their units', async () => {
    const token = pmcToken();
    const property = await newProperty();
    const elsewhere = await newProperty();
    const entrance = await newEntrance(property.id, token, { name: 'Haus 1' });
    const before = await allCounts();
    await expectProblem(
      await api.fetch('/api/entrances', {
        method: 'POST',
        token,
        json: { propertyId: property.id, name: 'haus 1' },
      }),
      409,
      { detail: `Entrance "haus 1" already exists in property ${property.id}` },
    );
    expect(await allCounts()).toEqual(before);
    // the same name in another property, and a rename to its own name, are fine
    await newEntrance(elsewhere.id, token, { name: 'Haus 1' });
    await patchOk(api, `/api/entrances/${entrance.id}`, token, { name: 'HAUS 1' });

    // an entrance with units cannot move to another property …
    await newUnit(property.id, token, { entranceId: entrance.id });
    const problem = await expectProblem(
      await api.fetch(`/api/entrances/${entrance.id}`, {
        method: 'PATCH',
        token,
        json: { propertyId: elsewhere.id, name: 'Haus 9' },
      }),
      400,
    );
    expect(problem.errors).toHaveProperty('propertyId');
    // … one without units can
    const empty = await newEntrance(property.id, token);
    expect(
      await patchOk(api, `/api/entrances/${empty.id}`, token, { propertyId: elsewhere.id }),
    ).toMatchObject({
      propertyId: elsewhere.id,
    });
  });

  it('captures Created, Updated and Deleted and fans out to the writer’s subscribed registrations only', async () => {
    const token = pmcToken();
    const property = await newProperty();
    const registration = await subscribe(api, world.pmc.id, 'Entrance');
    const updatesOnly = await subscribe(api, world.pmc.id, 'Entrance', [2]);
    await subscribe(api, world.pmc.id, 'Unit');
    await subscribe(api, world.otherPmc.id, 'Entrance');
    const since = await lastChangeId(api);

    const created = await newEntrance(property.id, token);
    const updated = await patchOk<EntranceRead>(api, `/api/entrances/${created.id}`, token, {
      notes: 'Key at 3',
    });
    // neither an empty patch nor a refused write records anything
    await patchOk(api, `/api/entrances/${updated.id}`, token, {});
    await api.fetch(`/api/entrances/${created.id}`, { method: 'DELETE', token });
    await api.fetch('/api/entrances', { method: 'POST', token, json: { propertyId: property.id, name: '' } });

    const changes = (await capturedChanges(api, since)).rows;
    expect(
      changes.map((c) => [c.entity_name, c.type, c.entity_id, c.initiator_party_id, c.initiator_account_id]),
    ).toEqual([
      ['Entrance', 1, created.id, world.pmc.id, world.pmc.full.id],
      ['Entrance', 2, created.id, world.pmc.id, world.pmc.full.id],
      ['Entrance', 3, created.id, world.pmc.id, world.pmc.full.id],
    ]);
    expect(changes[0].entity).toEqual(created);
    expect(changes[1].entity).toEqual(updated);
    expect(changes[2].entity).toEqual({
      ...updated,
      deleted: expect.any(String),
      lastModified: expect.any(String),
    });
    expect(await webhookRows(api, { changeIds: changes.map((c) => c.id) })).toEqual([
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[0].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[1].id },
      { registration_id: updatesOnly, state: WebhookState.Created, entity_change_id: changes[1].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[2].id },
    ]);
  });

  it('rolls back a write that fails at commit: no entrance change, no entity change, no webhook', async () => {
    const token = pmcToken();
    const property = await newProperty();
    const entrance = await newEntrance(property.id);
    await expectRolledBack(api, {
      partyId: world.pmc.id,
      entityName: 'Entrance',
      table: 'entrances',
      writes: [
        () =>
          api.fetch('/api/entrances', {
            method: 'POST',
            token,
            json: { propertyId: property.id, name: 'Rolled back' },
          }),
        () => api.fetch(`/api/entrances/${entrance.id}`, { method: 'PATCH', token, json: { notes: 'x' } }),
        () => api.fetch(`/api/entrances/${entrance.id}`, { method: 'DELETE', token }),
      ],
    });
  });
});

describe('Unit', () => {
  it('creates, reads, lists, searches, batch-reads, updates and deletes', async () => {
    const token = pmcToken();
    const property = await newProperty();
    const entrance = await newEntrance(property.id);
    const created = await newUnit(property.id, token, {
      entranceId: entrance.id,
      number: 'WE 12',
      floor: -1,
      unitType: 'storage',
      livingArea: 72.55,
      rooms: 2.5,
      notes: 'Cellar',
    });
    expect(created).toEqual({
      id: expect.any(Number),
      created: expect.any(String),
      lastModified: null,
      deleted: null,
      partyId: world.pmc.id,
      propertyId: property.id,
      entranceId: entrance.id,
      number: 'WE 12',
      floor: -1,
      unitType: 'storage',
      livingArea: 72.55,
      rooms: 2.5,
      notes: 'Cellar',
    });
    const plain = await newUnit(property.id, token, { floor: 3, livingArea: 40 });
    expect(plain).toMatchObject({ entranceId: null, unitType: 'apartment', rooms: null, livingArea: 40 });

    expect(await (await api.fetch(`/api/units/${created.id}`, { token })).json()).toEqual(created);

    const list = (await (
      await api.fetch('/api/units?SortByAttributeName=floor&AscendingOrder=false&PageSize=100', { token })
    ).json()) as { items: UnitRead[] };
    expect(list.items.filter((u) => u.propertyId === property.id).map((u) => u.id)).toEqual([
      plain.id,
      created.id,
    ]);

    // livingArea is a decimal attribute: 72.55 > 72.5 must hold exactly
    const search = await postOk<{ items: UnitRead[] }>(api, '/api/units/search', token, {
      filters: [
        { attribute: 'propertyId', operator: 'eq', value: property.id },
        { attribute: 'livingArea', operator: 'gt', value: 72.5 },
      ],
    });
    expect(search.items).toEqual([created]);
    const problem = await expectProblem(
      await api.fetch('/api/units/search', {
        method: 'POST',
        token,
        json: { filters: [{ attribute: 'livingArea', operator: 'gt', value: 'big' }] },
      }),
      400,
    );
    expect(problem.errors).toHaveProperty(['filters.0.value']);

    const batch = await postOk<UnitRead[]>(api, '/api/units/batch', token, {
      ids: [plain.id, created.id, plain.id],
    });
    expect(batch.map((u) => u.id)).toEqual([plain.id, created.id]);

    const patched = await patchOk<UnitRead>(api, `/api/units/${created.id}`, token, {
      entranceId: null,
      rooms: 3,
      unitType: 'apartment',
    });
    expect(patched).toMatchObject({ entranceId: null, rooms: 3, unitType: 'apartment', number: 'WE 12' });

    await expectDeleted(api, `/api/units/${created.id}`, token);
    // a deleted unit's number is free again
    await newUnit(property.id, token, { number: 'WE 12' });
  });

  it('applies the access rules of every operation', async () => {
    const property = await newProperty();
    await expectRegistryAccessRules(api, world, '/api/units', 'Unit', {
      body: () => ({ propertyId: property.id, number: `WE ${next()}` }),
      patch: { floor: 2 },
    });
  });

  it('scopes reads and writes to the caller’s parties (out of scope = 404)', async () => {
    const token = pmcToken();
    const foreignProperty = await newProperty(world.otherPmc.full.token);
    const foreign = await newUnit(foreignProperty.id, world.otherPmc.full.token);
    const foreignEntrance = await newEntrance(foreignProperty.id, world.otherPmc.full.token);
    const managedProperty = await newProperty(world.admin.full.token, { partyId: world.contractor.id });
    const managed = await newUnit(managedProperty.id, world.admin.full.token, {
      partyId: world.contractor.id,
    });

    expect((await api.fetch(`/api/units/${managed.id}`, { token })).status).toBe(200);
    await expectOutOfScope(api, '/api/units', token, foreign.id, {
      patch: { floor: 1 },
      visible: [managed.id],
    });
    const search = await postOk<{ items: UnitRead[] }>(api, '/api/units/search', token, {
      filters: [{ attribute: 'id', operator: 'in', value: [foreign.id, managed.id] }],
    });
    expect(search.items.map((u) => u.id)).toEqual([managed.id]);

    const own = await newProperty();
    await expectFieldErrors([
      ['/api/units', { propertyId: foreignProperty.id, number: 'X 1' }, 'propertyId'],
      ['/api/units', { propertyId: own.id, number: 'X 2', entranceId: foreignEntrance.id }, 'entranceId'],
    ]);
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const property = await newProperty();
    const unit = await newUnit(property.id);
    const before = await allCounts();
    const valid = { propertyId: property.id, number: 'WE 99' };
    await expectFieldErrors([
      ['/api/units', { ...valid, number: '' }, 'number'],
      ['/api/units', { ...valid, number: 'x'.repeat(51) }, 'number'],
      ['/api/units', { number: 'WE 1' }, 'propertyId'],
      ['/api/units', { ...valid, floor: 1.5 }, 'floor'],
      ['/api/units', { ...valid, floor: -21 }, 'floor'],
      ['/api/units', { ...valid, unitType: 'villa' }, 'unitType'],
      ['/api/units', { ...valid, livingArea: -1 }, 'livingArea'],
      ['/api/units', { ...valid, livingArea: 50.125 }, 'livingArea'],
      ['/api/units', { ...valid, livingArea: '50' }, 'livingArea'],
      ['/api/units', { ...valid, rooms: 1000 }, 'rooms'],
      ['/api/units', { ...valid, rooms: 2.25 }, 'rooms'],
      ['/api/units', { ...valid, entranceId: 2147483647 }, 'entranceId'],
      ['/api/units', { ...valid, entranceId: 0 }, 'entranceId'],
      [`/api/units/${unit.id}`, { propertyId: null }, 'propertyId'],
      [`/api/units/${unit.id}`, { unitType: null }, 'unitType'],
    ]);
    expect(await allCounts()).toEqual(before);
  });

  it('keeps a unit’s entrance in its property and its number unique there', async () => {
    const token = pmcToken();
    const property = await newProperty();
    const elsewhere = await newProperty();
    const entrance = await newEntrance(property.id);
    const otherEntrance = await newEntrance(elsewhere.id);
    const before = await allCounts();

    let problem = await expectProblem(
      await api.fetch('/api/units', {
        method: 'POST',
        token,
        json: { propertyId: property.id, number: 'WE 1', entranceId: otherEntrance.id },
      }),
      400,
    );
    expect(problem.errors).toEqual({
      entranceId: [
        `Entrance ${otherEntrance.id} belongs to property ${elsewhere.id}, not to property ${property.id}`,
      ],
    });
    expect(await allCounts()).toEqual(before);

    const unit = await newUnit(property.id, token, { number: 'WE 1', entranceId: entrance.id });
    // moving the unit alone would strand it behind an entrance of the old property
    problem = await expectProblem(
      await api.fetch(`/api/units/${unit.id}`, {
        method: 'PATCH',
        token,
        json: { propertyId: elsewhere.id },
      }),
      400,
    );
    expect(problem.errors).toHaveProperty('entranceId');
    expect(
      await patchOk(api, `/api/units/${unit.id}`, token, {
        propertyId: elsewhere.id,
        entranceId: otherEntrance.id,
      }),
    ).toMatchObject({ propertyId: elsewhere.id, entranceId: otherEntrance.id });

    await newUnit(property.id, token, { number: 'WE 2' });
    await expectProblem(
      await api.fetch('/api/units', {
        method: 'POST',
        token,
        json: { propertyId: property.id, number: 'we 2' },
      }),
      409,
      { detail: `Unit "we 2" already exists in property ${property.id}` },
    );
    await expectProblem(
      await api.fetch(`/api/units/${unit.id}`, {
        method: 'PATCH',
        token,
        json: { propertyId: property.id, entranceId: null, number: 'WE 2' },
      }),
      409,
    );
  });

  it('captures every write, none for an unsubscribed event, a refused or a rolled-back write', async () => {
    const token = pmcToken();
    const property = await newProperty();
    const otherEntrance = await newEntrance((await newProperty()).id);
    const registration = await subscribe(api, world.pmc.id, 'Unit');
    const deletesOnly = await subscribe(api, world.pmc.id, 'Unit', [3]);
    await subscribe(api, world.pmc.id, 'UnitContract');
    await subscribe(api, world.otherPmc.id, 'Unit');
    const since = await lastChangeId(api);

    const created = await newUnit(property.id, token, { livingArea: 55.5 });
    const updated = await patchOk<UnitRead>(api, `/api/units/${created.id}`, token, { floor: 4 });
    await api.fetch(`/api/units/${created.id}`, { method: 'DELETE', token });
    // refused by the entrance rule, after the relation checks passed
    const refused = await api.fetch('/api/units', {
      method: 'POST',
      token,
      json: { propertyId: property.id, number: 'WE 77', entranceId: otherEntrance.id },
    });
    expect(refused.status).toBe(400);

    const changes = (await capturedChanges(api, since)).rows;
    expect(changes.map((c) => [c.entity_name, c.type, c.entity_id, c.initiator_account_id])).toEqual([
      ['Unit', 1, created.id, world.pmc.full.id],
      ['Unit', 2, created.id, world.pmc.full.id],
      ['Unit', 3, created.id, world.pmc.full.id],
    ]);
    expect(changes[0].entity).toEqual(created);
    expect(changes[0].entity.livingArea).toBe(55.5);
    expect(changes[1].entity).toEqual(updated);
    expect(changes[2].entity.deleted).not.toBeNull();
    expect(await webhookRows(api, { changeIds: changes.map((c) => c.id) })).toEqual([
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[0].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[1].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[2].id },
      { registration_id: deletesOnly, state: WebhookState.Created, entity_change_id: changes[2].id },
    ]);

    // a write that fails after its change was recorded leaves neither the unit nor the change
    await api.db.knex.raw(`
      create function refuse_webhook() returns trigger language plpgsql as
        $$ begin raise exception 'webhook insert refused by the test'; end $$;
      create trigger refuse_webhook before insert on webhooks for each row execute function refuse_webhook();
    `);
    try {
      const counts = await allCounts();
      const failed = await api.fetch('/api/units', {
        method: 'POST',
        token,
        json: { propertyId: property.id, number: 'WE rolled back' },
      });
      expect(failed.status).toBe(500);
      expect(await allCounts()).toEqual(counts);
      expect(await api.db.knex('units').where({ number: 'WE rolled back' })).toEqual([]);
    } finally {
      await api.db.knex.raw('drop trigger refuse_webhook on webhooks; drop function refuse_webhook();');
    }
  });

  it('chains the changes of one unit for a grouped registration', async () => {
    const grouped = await subscribe(api, world.pmc.id, 'Unit', [1, 2, 3], true);
    const token = pmcToken();
    const property = await newProperty();
    const unit = await newUnit(property.id, token);
    const other = await newUnit(property.id, token);
    await patchOk(api, `/api/units/${unit.id}`, token, { floor: 1 });
    await api.fetch(`/api/units/${unit.id}`, { method: 'DELETE', token });
    const webhooks = await api.db.knex('webhooks').where({ registration_id: grouped }).orderBy('id');
    expect(webhooks.map((w) => [w.state, w.group_key, w.group_seq])).toEqual([
      [WebhookState.Created, `Unit:${unit.id}`, 1],
      [WebhookState.Created, `Unit:${other.id}`, 1],
      [WebhookState.Pending, `Unit:${unit.id}`, 2],
      [WebhookState.Pending, `Unit:${unit.id}`, 3],
    ]);
  });

  it('counts the party’s live units in the UnitCount of the access token’s telemetry', async () => {
    const party = await buildParty(api.deps, { type: 2 });
    const account = await buildAccount(api.deps, { partyId: party.id });
    const unitCount = async () =>
      (
        JSON.parse(String(decodeJwt((await login(api, account.email)).accessToken).telemetry)) as {
          UnitCount: number;
        }
      ).UnitCount;
    expect(await unitCount()).toBe(0);

    const token = (await login(api, account.email)).accessToken;
    const property = await newProperty(token);
    const units = [
      await newUnit(property.id, token),
      await newUnit(property.id, token),
      await newUnit(property.id, token),
    ];
    await api.fetch(`/api/units/${units[0]!.id}`, { method: 'DELETE', token });
    // another party's units, even in this party's property, are not this party's
    await newUnit(property.id, world.admin.full.token, { partyId: world.pmc.id });
    expect(await unitCount()).toBe(2);
  });
});

describe('UnitContract', () => {
  it('creates, reads, lists, searches, batch-reads, updates and deletes', async () => {
    const token = pmcToken();
    const unit = await newUnit((await newProperty()).id);
    const created = await newContract(unit.id, token, {
      contractPartyId: world.user.id,
      startDate: '2024-03-01',
      endDate: '2026-02-28',
      monthlyRent: 850.5,
      notes: 'Index rent',
    });
    expect(created).toEqual({
      id: expect.any(Number),
      created: expect.any(String),
      lastModified: null,
      deleted: null,
      partyId: world.pmc.id,
      unitId: unit.id,
      contractPartyId: world.user.id,
      contractType: 'tenancy',
      startDate: '2024-03-01',
      endDate: '2026-02-28',
      monthlyRent: 850.5,
      currency: 'EUR',
      notes: 'Index rent',
    });
    const ownership = await newContract(unit.id, token, {
      contractType: 'ownership',
      startDate: '2020-01-01',
      currency: 'CHF',
    });
    expect(ownership).toMatchObject({
      contractPartyId: null,
      endDate: null,
      monthlyRent: null,
      currency: 'CHF',
    });

    expect(await (await api.fetch(`/api/unit-contracts/${created.id}`, { token })).json()).toEqual(created);

    const list = (await (
      await api.fetch('/api/unit-contracts?SortByAttributeName=startDate&PageSize=100', { token })
    ).json()) as { items: UnitContractRead[] };
    expect(list.items.filter((c) => c.unitId === unit.id).map((c) => c.id)).toEqual([
      ownership.id,
      created.id,
    ]);

    const search = await postOk<{ items: UnitContractRead[] }>(api, '/api/unit-contracts/search', token, {
      filters: [
        { attribute: 'unitId', operator: 'eq', value: unit.id },
        { attribute: 'startDate', operator: 'gte', value: '2024-03-01' },
        { attribute: 'monthlyRent', operator: 'lt', value: 850.51 },
      ],
    });
    expect(search.items).toEqual([created]);
    const problem = await expectProblem(
      await api.fetch('/api/unit-contracts/search', {
        method: 'POST',
        token,
        json: { filters: [{ attribute: 'startDate', operator: 'eq', value: '2024-03-01T00:00:00Z' }] },
      }),
      400,
    );
    expect(problem.errors).toEqual({ 'filters.0.value': ['must be a date, YYYY-MM-DD'] });

    const batch = await postOk<UnitContractRead[]>(api, '/api/unit-contracts/batch', token, {
      ids: [created.id, ownership.id],
    });
    expect(batch).toEqual([created, ownership]);

    const patched = await patchOk<UnitContractRead>(api, `/api/unit-contracts/${created.id}`, token, {
      endDate: null,
      monthlyRent: 900,
      contractPartyId: null,
    });
    expect(patched).toMatchObject({
      endDate: null,
      monthlyRent: 900,
      contractPartyId: null,
      startDate: '2024-03-01',
    });

    expect((await api.fetch(`/api/unit-contracts/${created.id}`, { method: 'DELETE', token })).status).toBe(
      204,
    );
    expect((await api.fetch(`/api/unit-contracts/${created.id}`, { token })).status).toBe(404);
  });

  it('presents dates as stored whatever the server’s time zone', async () => {
    const unit = await newUnit((await newProperty()).id);
    const zone = process.env.TZ;
    // UTC+14: a Date at local midnight is the previous day in UTC
    process.env.TZ = 'Pacific/Kiritimati';
    try {
      const created = await newContract(unit.id, pmcToken(), {
        startDate: '2025-01-01',
        endDate: '2025-12-31',
      });
      const read = (await (
        await api.fetch(`/api/unit-contracts/${created.id}`, { token: pmcToken() })
      ).json()) as UnitContractRead;
      expect([read.startDate, read.endDate]).toEqual(['2025-01-01', '2025-12-31']);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it('applies the access rules of every operation', async () => {
    const unit = await newUnit((await newProperty()).id);
    await expectRegistryAccessRules(api, world, '/api/unit-contracts', 'UnitContract', {
      body: { unitId: unit.id, contractType: 'tenancy', startDate: '2025-01-01' },
      patch: { monthlyRent: 1000 },
    });
  });

  it('scopes reads, writes and the contract party to the caller’s parties (out of scope = 404)', async () => {
    const token = pmcToken();
    const foreignUnit = await newUnit(
      (await newProperty(world.otherPmc.full.token)).id,
      world.otherPmc.full.token,
    );
    const foreign = await newContract(foreignUnit.id, world.otherPmc.full.token);
    const unit = await newUnit((await newProperty()).id);
    const own = await newContract(unit.id);

    await expectOutOfScope(api, '/api/unit-contracts', token, foreign.id, {
      patch: { notes: 'x' },
      visible: [own.id],
    });

    // the contract party: the caller's own and managed parties pass; others are unknown, like missing ones
    expect((await newContract(unit.id, token, { contractPartyId: world.pmc.id })).contractPartyId).toBe(
      world.pmc.id,
    );
    expect((await newContract(unit.id, token, { contractPartyId: world.broker.id })).contractPartyId).toBe(
      world.broker.id,
    );
    const deletedParty = await buildParty(api.deps, { type: 7, managedByPartyId: world.pmc.id });
    await api.db.knex('parties').where({ id: deletedParty.id }).update({ deleted: new Date() });
    const before = await allCounts();
    await expectFieldErrors([
      [
        '/api/unit-contracts',
        { unitId: foreignUnit.id, contractType: 'tenancy', startDate: '2025-01-01' },
        'unitId',
      ],
      [
        '/api/unit-contracts',
        {
          unitId: unit.id,
          contractType: 'tenancy',
          startDate: '2025-01-01',
          contractPartyId: world.otherUser.id,
        },
        'contractPartyId',
      ],
      [
        '/api/unit-contracts',
        { unitId: unit.id, contractType: 'tenancy', startDate: '2025-01-01', contractPartyId: 2147483647 },
        'contractPartyId',
      ],
      [
        '/api/unit-contracts',
        {
          unitId: unit.id,
          contractType: 'tenancy',
          startDate: '2025-01-01',
          contractPartyId: deletedParty.id,
        },
        'contractPartyId',
      ],
      [`/api/unit-contracts/${own.id}`, { contractPartyId: world.otherPmc.id }, 'contractPartyId'],
    ]);
    expect(await allCounts()).toEqual(before);
    // Admin may name any party
    expect(
      (await newContract(unit.id, world.admin.full.token, { contractPartyId: world.otherUser.id }))
        .contractPartyId,
    ).toBe(world.otherUser.id);
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const unit = await newUnit((await newProperty()).id);
    const contract = await newContract(unit.id, pmcToken(), {
      startDate: '2025-06-01',
      endDate: '2025-12-31',
    });
    const before = await allCounts();
    const valid = { unitId: unit.id, contractType: 'tenancy', startDate: '2025-01-01' };
    await expectFieldErrors([
      ['/api/unit-contracts', { contractType: 'tenancy', startDate: '2025-01-01' }, 'unitId'],
      ['/api/unit-contracts', { unitId: unit.id, startDate: '2025-01-01' }, 'contractType'],
      ['/api/unit-contracts', { ...valid, contractType: 'lease' }, 'contractType'],
      ['/api/unit-contracts', { unitId: unit.id, contractType: 'tenancy' }, 'startDate'],
      ['/api/unit-contracts', { ...valid, startDate: '2025-02-30' }, 'startDate'],
      ['/api/unit-contracts', { ...valid, startDate: '01.01.2025' }, 'startDate'],
      ['/api/unit-contracts', { ...valid, endDate: '2024-12-31' }, 'endDate'],
      ['/api/unit-contracts', { ...valid, monthlyRent: -0.01 }, 'monthlyRent'],
      ['/api/unit-contracts', { ...valid, monthlyRent: 10.001 }, 'monthlyRent'],
      ['/api/unit-contracts', { ...valid, currency: 'eur' }, 'currency'],
      ['/api/unit-contracts', { ...valid, currency: 'XYZ' }, 'currency'],
      ['/api/unit-contracts', { ...valid, currency: null }, 'currency'],
      // a patch of one date is held to the other's stored value
      [`/api/unit-contracts/${contract.id}`, { endDate: '2025-05-31' }, 'endDate'],
      [`/api/unit-contracts/${contract.id}`, { startDate: '2026-01-01' }, 'endDate'],
      [`/api/unit-contracts/${contract.id}`, { startDate: null }, 'startDate'],
    ]);
    expect(await allCounts()).toEqual(before);
    // the same day is a valid (one-day) contract
    expect(
      await patchOk(api, `/api/unit-contracts/${contract.id}`, pmcToken(), { endDate: '2025-06-01' }),
    ).toMatchObject({
      startDate: '2025-06-01',
      endDate: '2025-06-01',
    });
  });

  it('captures every write and fans out to the writer’s subscribed registrations only', async () => {
    const token = pmcToken();
    const unit = await newUnit((await newProperty()).id);
    const registration = await subscribe(api, world.pmc.id, 'UnitContract');
    const createsOnly = await subscribe(api, world.pmc.id, 'UnitContract', [1]);
    await subscribe(api, world.pmc.id, 'Unit', [2]);
    await subscribe(api, world.otherPmc.id, 'UnitContract');
    const since = await lastChangeId(api);

    const created = await newContract(unit.id, token, { monthlyRent: 700 });
    const updated = await patchOk<UnitContractRead>(api, `/api/unit-contracts/${created.id}`, token, {
      endDate: '2025-12-31',
    });
    await api.fetch(`/api/unit-contracts/${created.id}`, { method: 'DELETE', token });
    // refused by the date rule inside the transaction: nothing recorded
    await api.fetch('/api/unit-contracts', {
      method: 'POST',
      token,
      json: { unitId: unit.id, contractType: 'tenancy', startDate: '2025-01-01', endDate: '2024-01-01' },
    });

    const changes = (await capturedChanges(api, since)).rows;
    expect(changes.map((c) => [c.entity_name, c.type, c.entity_id, c.initiator_party_id])).toEqual([
      ['UnitContract', 1, created.id, world.pmc.id],
      ['UnitContract', 2, created.id, world.pmc.id],
      ['UnitContract', 3, created.id, world.pmc.id],
    ]);
    expect(changes[0].entity).toEqual(created);
    expect(changes[1].entity).toEqual(updated);
    expect(changes[1].entity).toMatchObject({
      startDate: '2025-01-01',
      endDate: '2025-12-31',
      monthlyRent: 700,
    });
    expect(changes[2].entity.deleted).not.toBeNull();
    expect(await webhookRows(api, { changeIds: changes.map((c) => c.id) })).toEqual([
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[0].id },
      { registration_id: createsOnly, state: WebhookState.Created, entity_change_id: changes[0].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[1].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[2].id },
    ]);
  });

  it('rolls back a write that fails at commit: no contract change, no entity change, no webhook', async () => {
    const token = pmcToken();
    const unit = await newUnit((await newProperty()).id);
    const contract = await newContract(unit.id);
    await expectRolledBack(api, {
      partyId: world.pmc.id,
      entityName: 'UnitContract',
      table: 'unit_contracts',
      writes: [
        () =>
          api.fetch('/api/unit-contracts', {
            method: 'POST',
            token,
            json: { unitId: unit.id, contractType: 'tenancy', startDate: '2025-01-01' },
          }),
        () =>
          api.fetch(`/api/unit-contracts/${contract.id}`, {
            method: 'PATCH',
            token,
            json: { monthlyRent: 1 },
          }),
        () => api.fetch(`/api/unit-contracts/${contract.id}`, { method: 'DELETE', token }),
      ],
    });
  });
});
