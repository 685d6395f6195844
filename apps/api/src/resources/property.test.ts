import { WebhookState } from '@platform/shared';
import { beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, writableCounts, expectFieldErrors } from '../../tests/support/http';
import { useTestApi } from '../../tests/support/api';
import {
  capturedChanges,
  countRows,
  expectRolledBack,
  expectOutOfScope,
  expectRegistryAccessRules,
  patchOk,
  postOk,
  resetCapture,
  subscribe,
  webhookRows,
  expectDeleted,
} from '../../tests/support/resources';

const { api, world } = useTestApi({ world: true });

type Property = { id: number; partyId: number; name: string; city: string };

const property = (overrides: Record<string, unknown> = {}) => ({
  name: 'Lindenhof',
  street: 'Lindenstraße',
  houseNumber: '12a',
  postalCode: '10969',
  city: 'Berlin',
  ...overrides,
});

const create = (token: string, body: Record<string, unknown> = property()) =>
  postOk<Property>(api, '/api/properties', token, body);

beforeEach(() => resetCapture(api));

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

    await expectDeleted(api, `/api/properties/${created.id}`, token);
  });

  it('applies the access rules of every operation', async () => {
    await expectRegistryAccessRules(api, world, '/api/properties', 'Property', {
      body: property(),
      patch: { city: 'Hamburg' },
    });
  });

  it('scopes reads and writes to the caller’s parties (out of scope = 404)', async () => {
    const foreign = await create(world.otherPmc.full.token);
    const managed = await create(world.admin.full.token, property({ partyId: world.user.id }));
    const token = world.pmc.full.token;
    expect((await api.fetch(`/api/properties/${managed.id}`, { token })).status).toBe(200);
    await expectOutOfScope(api, '/api/properties', token, foreign.id, {
      patch: { city: 'X' },
      visible: [managed.id],
    });
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
    const existing = await create(world.pmc.full.token);
    const before = await writableCounts(api);
    const properties = await api.db.knex('properties').orderBy('id').select('*');
    const token = world.pmc.full.token;
    await expectFieldErrors(api, 'POST', '/api/properties', token, [
      [property({ name: '' }), 'name'],
      [property({ country: 'Germany' }), 'country'],
      [property({ yearBuilt: 'old' }), 'yearBuilt'],
      [property({ unknown: 1 }), 'unknown'],
      [{ name: 'No address' }, 'street'],
    ]);
    // the merge patch derived from the write schema: a required field cannot be cleared, the
    // owning party never moves, and unknown fields are refused
    await expectFieldErrors(api, 'PATCH', `/api/properties/${existing.id}`, token, [
      [{ name: null }, 'name'],
      [{ street: '' }, 'street'],
      [{ yearBuilt: 'old' }, 'yearBuilt'],
      [{ partyId: world.user.id }, 'partyId'],
      [{ unknown: 1 }, 'unknown'],
    ]);
    expect(await api.db.knex('properties').orderBy('id').select('*')).toEqual(properties);
    expect(await writableCounts(api)).toEqual(before);
    expect(await countRows(api, 'entity_changes')).toBe(1);
  });

  it('captures every write with its read shape and fans out to the writer’s subscribed registrations only', async () => {
    const registration = await subscribe(api, world.pmc.id, 'Property');
    const updatesOnly = await subscribe(api, world.pmc.id, 'Property', [2]);
    const foreign = await subscribe(api, world.otherPmc.id, 'Property');
    const token = world.pmc.full.token;
    const created = await create(token);
    await api.fetch(`/api/properties/${created.id}`, { method: 'PATCH', token, json: { city: 'Potsdam' } });
    await api.fetch(`/api/properties/${created.id}`, { method: 'DELETE', token });

    const { rows: changes, summary } = await capturedChanges(api);
    expect(summary).toEqual([
      ['Property', 1, created.id, world.pmc.id, world.pmc.full.id],
      ['Property', 2, created.id, world.pmc.id, world.pmc.full.id],
      ['Property', 3, created.id, world.pmc.id, world.pmc.full.id],
    ]);
    expect(changes[0].entity).toEqual(created);
    expect(changes[1].entity).toMatchObject({ city: 'Potsdam' });
    expect(changes[2].entity.deleted).not.toBeNull();

    const webhooks = await webhookRows(api);
    expect(webhooks).toEqual([
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[0].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[1].id },
      { registration_id: updatesOnly, state: WebhookState.Created, entity_change_id: changes[1].id },
      { registration_id: registration, state: WebhookState.Created, entity_change_id: changes[2].id },
    ]);
    expect(webhooks.some((w) => w.registration_id === foreign)).toBe(false);
  });

  it('chains the changes of one property for a grouped registration', async () => {
    const grouped = await subscribe(api, world.pmc.id, 'Property', [1, 2, 3], true);
    const token = world.pmc.full.token;
    const created = await create(token);
    await api.fetch(`/api/properties/${created.id}`, { method: 'PATCH', token, json: { city: 'Potsdam' } });
    const webhooks = await api.db.knex('webhooks').where({ registration_id: grouped }).orderBy('id');
    expect(webhooks.map((w) => [w.state, w.group_key, w.group_seq])).toEqual([
      [WebhookState.Created, `Property:${created.id}`, 1],
      [WebhookState.Pending, `Property:${created.id}`, 2],
    ]);
  });

  it('records no change for an empty patch, a refused write, or another party’s write', async () => {
    await subscribe(api, world.pmc.id, 'Property');
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
    expect(await countRows(api, 'webhooks')).toBe(0);
    expect(await countRows(api, 'entity_changes')).toBe(1);
  });

  it('rolls back a write that fails at commit: no property change, no entity change, no webhook', async () => {
    const token = world.pmc.full.token;
    const existing = await create(token);
    await expectRolledBack(api, {
      partyId: world.pmc.id,
      entityName: 'Property',
      table: 'properties',
      writes: [
        () => api.fetch('/api/properties', { method: 'POST', token, json: property({ name: 'Gone' }) }),
        () => api.fetch(`/api/properties/${existing.id}`, { method: 'PATCH', token, json: { city: 'Gone' } }),
        () => api.fetch(`/api/properties/${existing.id}`, { method: 'DELETE', token }),
      ],
    });
    // the same writes succeed once nothing refuses them
    expect(await patchOk(api, `/api/properties/${existing.id}`, token, { city: 'Potsdam' })).toMatchObject({
      city: 'Potsdam',
    });
  });
});
