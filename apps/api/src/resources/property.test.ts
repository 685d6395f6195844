import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, writableCounts } from '../http/test-support';
import { buildWorld, expectAccessRules, startTestApi, type TestApi, type World } from '../testing';

let api: TestApi;
let world: World;

const property = (overrides: Record<string, unknown> = {}) => ({
  name: 'Lindenhof',
  street: 'Lindenstraße',
  houseNumber: '12a',
  postalCode: '10969',
  city: 'Berlin',
  ...overrides,
});

/** A live registration of `partyId` subscribed to Property events (direct insert: the API arrives later). */
async function subscribe(partyId: number, types = [1, 2, 3], shouldGroup = false): Promise<number> {
  const [registration] = await api.db
    .knex('webhook_registrations')
    .insert({
      party_id: partyId,
      target_url: 'http://127.0.0.1:9/hook',
      should_group: shouldGroup,
      signing_secret: 'x',
    })
    .returning('id');
  await api.db
    .knex('webhook_events')
    .insert(types.map((type) => ({ registration_id: registration.id, entity_name: 'Property', type })));
  return registration.id;
}

async function create(token: string, body: Record<string, unknown> = property()) {
  const response = await api.fetch('/api/properties', { method: 'POST', token, json: body });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as { id: number; partyId: number; name: string; city: string };
}

beforeAll(async () => {
  api = await startTestApi();
  world = await buildWorld(api);
});
afterAll(() => api.close());
beforeEach(async () => {
  await api.db.knex.raw(
    'truncate webhooks, webhook_groups, entity_changes, webhook_events, webhook_registrations cascade',
  );
});

describe('Property through the resource registry', () => {
  it('creates, reads, lists, searches, updates and deletes', async () => {
    const token = world.pmc.full.token;
    const created = await create(token);
    expect(created).toMatchObject({
      partyId: world.pmc.id,
      name: 'Lindenhof',
      city: 'Berlin',
      country: 'DE',
    });

    const read = await api.fetch(`/api/properties/${created.id}`, { token });
    expect(await read.json()).toEqual(created);

    const list = (await (await api.fetch('/api/properties?SortByAttributeName=name', { token })).json()) as {
      items: unknown[];
      totalCount: number;
    };
    expect(list.items).toContainEqual(created);

    const search = await api.fetch('/api/properties/search', {
      method: 'POST',
      token,
      json: { filters: [{ attribute: 'city', operator: 'eq', value: 'Berlin' }] },
    });
    expect(((await search.json()) as { items: { id: number }[] }).items.map((i) => i.id)).toContain(
      created.id,
    );

    const patched = await api.fetch(`/api/properties/${created.id}`, {
      method: 'PATCH',
      token,
      json: { name: 'Lindenhof Süd', houseNumber: null },
    });
    expect(await patched.json()).toMatchObject({ name: 'Lindenhof Süd', houseNumber: null, city: 'Berlin' });

    const deleted = await api.fetch(`/api/properties/${created.id}`, { method: 'DELETE', token });
    expect(deleted.status).toBe(204);
    expect((await api.fetch(`/api/properties/${created.id}`, { token })).status).toBe(404);
  });

  it('applies the access rules of every operation', async () => {
    const inScope = async () =>
      `/api/properties/${(await create(world.admin.full.token, property({ partyId: world.pmc.id }))).id}`;
    await expectAccessRules(api, world, {
      method: 'GET',
      path: '/api/properties',
      allow: [1, 2, 3, 5, 7, 13, 14],
      permission: 'Property.Read',
    });
    await expectAccessRules(api, world, {
      method: 'POST',
      path: '/api/properties',
      body: property(),
      allow: [1, 2],
      permission: 'Property.Create',
    });
    await expectAccessRules(api, world, {
      method: 'PATCH',
      path: inScope,
      body: { city: 'Hamburg' },
      allow: [1, 2],
      permission: 'Property.Update',
    });
    await expectAccessRules(api, world, {
      method: 'DELETE',
      path: inScope,
      allow: [1, 2],
      permission: 'Property.Delete',
    });
  });

  it('scopes reads and writes to the caller’s parties (out of scope = 404)', async () => {
    const foreign = await create(world.otherPmc.full.token);
    const managed = await create(world.admin.full.token, property({ partyId: world.user.id }));
    const token = world.pmc.full.token;
    expect((await api.fetch(`/api/properties/${foreign.id}`, { token })).status).toBe(404);
    expect((await api.fetch(`/api/properties/${managed.id}`, { token })).status).toBe(200);
    await expectProblem(
      await api.fetch(`/api/properties/${foreign.id}`, { method: 'PATCH', token, json: { city: 'X' } }),
      404,
    );
    await expectProblem(await api.fetch(`/api/properties/${foreign.id}`, { method: 'DELETE', token }), 404);
    const batch = await api.fetch('/api/properties/batch', {
      method: 'POST',
      token,
      json: { ids: [foreign.id, managed.id] },
    });
    expect(((await batch.json()) as { id: number }[]).map((p) => p.id)).toEqual([managed.id]);
    // creating for a party outside the caller's scope is refused, naming partyId
    const problem = await expectProblem(
      await api.fetch('/api/properties', {
        method: 'POST',
        token,
        json: property({ partyId: world.otherPmc.id }),
      }),
      400,
    );
    expect(problem.errors).toHaveProperty('partyId');
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const before = await writableCounts(api);
    const count = async () => Number((await api.db.knex('properties').count({ n: '*' }))[0]!.n);
    const properties = await count();
    const token = world.pmc.full.token;
    for (const [body, field] of [
      [property({ name: '' }), 'name'],
      [property({ country: 'Germany' }), 'country'],
      [property({ yearBuilt: 'old' }), 'yearBuilt'],
      [property({ unknown: 1 }), 'unknown'],
      [{ name: 'No address' }, 'street'],
    ] as const) {
      const problem = await expectProblem(
        await api.fetch('/api/properties', { method: 'POST', token, json: body }),
        400,
      );
      expect(problem.errors, JSON.stringify(body)).toHaveProperty(field);
    }
    expect(await count()).toBe(properties);
    expect(await writableCounts(api)).toEqual(before);
  });

  it('captures every write with its read shape and fans out to the writer’s subscribed registrations only', async () => {
    const registration = await subscribe(world.pmc.id);
    const updatesOnly = await subscribe(world.pmc.id, [2]);
    const foreign = await subscribe(world.otherPmc.id);
    const token = world.pmc.full.token;
    const created = await create(token);
    await api.fetch(`/api/properties/${created.id}`, { method: 'PATCH', token, json: { city: 'Potsdam' } });
    await api.fetch(`/api/properties/${created.id}`, { method: 'DELETE', token });

    const changes = await api.db.knex('entity_changes').orderBy('id').select('*');
    expect(
      changes.map((c) => [c.entity_name, c.type, c.entity_id, c.initiator_party_id, c.initiator_account_id]),
    ).toEqual([
      ['Property', 1, created.id, world.pmc.id, world.pmc.full.id],
      ['Property', 2, created.id, world.pmc.id, world.pmc.full.id],
      ['Property', 3, created.id, world.pmc.id, world.pmc.full.id],
    ]);
    expect(changes[0].entity).toEqual(created);
    expect(changes[1].entity).toMatchObject({ city: 'Potsdam' });
    expect(changes[2].entity.deleted).not.toBeNull();

    const webhooks = await api.db
      .knex('webhooks')
      .orderBy('id')
      .select('registration_id', 'state', 'entity_change_id');
    expect(webhooks).toEqual([
      { registration_id: registration, state: 1, entity_change_id: changes[0].id },
      { registration_id: registration, state: 1, entity_change_id: changes[1].id },
      { registration_id: updatesOnly, state: 1, entity_change_id: changes[1].id },
      { registration_id: registration, state: 1, entity_change_id: changes[2].id },
    ]);
    expect(webhooks.some((w) => w.registration_id === foreign)).toBe(false);
  });

  it('chains the changes of one property for a grouped registration', async () => {
    const grouped = await subscribe(world.pmc.id, [1, 2, 3], true);
    const token = world.pmc.full.token;
    const created = await create(token);
    await api.fetch(`/api/properties/${created.id}`, { method: 'PATCH', token, json: { city: 'Potsdam' } });
    const webhooks = await api.db.knex('webhooks').where({ registration_id: grouped }).orderBy('id');
    expect(webhooks.map((w) => [w.state, w.group_key, w.group_seq])).toEqual([
      [1, `Property:${created.id}`, 1],
      [6, `Property:${created.id}`, 2],
    ]);
  });

  it('records no change for an empty patch, a refused write, or another party’s write', async () => {
    await subscribe(world.pmc.id);
    const created = await create(world.otherPmc.full.token);
    await api.fetch(`/api/properties/${created.id}`, {
      method: 'PATCH',
      token: world.otherPmc.full.token,
      json: {},
    });
    await api.fetch('/api/properties', {
      method: 'POST',
      token: world.pmc.full.token,
      json: property({ name: '' }),
    });
    expect(await api.db.knex('webhooks').count({ n: '*' })).toEqual([{ n: 0 }]);
    expect(await api.db.knex('entity_changes').count({ n: '*' })).toEqual([{ n: 1 }]);
  });
});
