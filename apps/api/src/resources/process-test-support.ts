import { expect } from 'vitest';
import type { TestApi, World } from '../testing';

/** Shared helpers of the process-group tests (Process, ProcessFeed, WorkOrder, Inquiry, Notice). */

/** A live registration of `partyId` subscribed to `entityName` events (direct insert). */
export async function subscribe(
  api: TestApi,
  partyId: number,
  entityName: string,
  types: readonly number[] = [1, 2, 3],
  shouldGroup = false,
): Promise<number> {
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
    .insert(types.map((type) => ({ registration_id: registration.id, entity_name: entityName, type })));
  return registration.id as number;
}

/** Empties the change-capture tables, so each test counts only its own rows. */
export async function resetCapture(api: TestApi): Promise<void> {
  await api.db.knex.raw(
    'truncate webhooks, webhook_groups, entity_changes, webhook_events, webhook_registrations cascade',
  );
}

/** A property of `partyId`, inserted directly (its API is another resource's business). */
export async function buildProperty(api: TestApi, partyId: number): Promise<number> {
  const [row] = await api.db
    .knex('properties')
    .insert({ party_id: partyId, name: 'Haus', street: 'Weg 1', postal_code: '10115', city: 'Berlin' })
    .returning('id');
  return row.id as number;
}

/** A unit of `propertyId`, inserted directly. */
export async function buildUnit(api: TestApi, partyId: number, propertyId: number): Promise<number> {
  const [row] = await api.db
    .knex('units')
    .insert({
      party_id: partyId,
      property_id: propertyId,
      number: `U-${Math.random().toString(36).slice(2, 8)}`,
    })
    .returning('id');
  return row.id as number;
}

/** Row count of `table`. */
export async function countRows(api: TestApi, table: string): Promise<number> {
  const [row] = await api.db.knex(table).count<{ n: string }[]>({ n: '*' });
  return Number(row?.n);
}

/** POST `body` to `path` as `token`, asserting a 200, and answer the created read shape. */
export async function createThrough<T = Record<string, unknown> & { id: number }>(
  api: TestApi,
  path: string,
  token: string,
  body: unknown,
): Promise<T> {
  const response = await api.fetch(path, { method: 'POST', token, json: body });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as T;
}

/** PATCH `path` with `body`, asserting a 200, and answer the updated read shape. */
export async function patchThrough<T = Record<string, unknown> & { id: number }>(
  api: TestApi,
  path: string,
  token: string,
  body: unknown,
): Promise<T> {
  const response = await api.fetch(path, { method: 'PATCH', token, json: body });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as T;
}

/** The ids of a page or array answer. */
export async function idsOf(response: Response): Promise<number[]> {
  expect(response.status, await response.clone().text()).toBe(200);
  const body = (await response.json()) as { items: { id: number }[] } | { id: number }[];
  return (Array.isArray(body) ? body : body.items).map((item) => item.id);
}

/**
 * The change-capture contract of one resource, as the party `pmc` writes it: each create, update
 * (and delete, when the resource has one) writes exactly one entity_changes row holding the read
 * shape the API answered and the initiator, and one webhook per matching live registration of the
 * writer's party; a registration of another party, one subscribed to updates only, and one
 * subscribed to another entity get nothing else.
 */
export async function expectCaptureContract(
  api: TestApi,
  world: World,
  resource: {
    entityName: string;
    path: string;
    body: unknown;
    patch: Record<string, unknown>;
    deletable?: boolean;
  },
): Promise<{ created: Record<string, unknown> & { id: number } }> {
  const all = await subscribe(api, world.pmc.id, resource.entityName);
  const updatesOnly = await subscribe(api, world.pmc.id, resource.entityName, [2]);
  const otherEntity = await subscribe(api, world.pmc.id, 'Property');
  const foreign = await subscribe(api, world.otherPmc.id, resource.entityName);
  const token = world.pmc.full.token;
  const actor = world.pmc.full.id;

  const created = await createThrough(api, resource.path, token, resource.body);
  const patched = await patchThrough(api, `${resource.path}/${created.id}`, token, resource.patch);
  const expected: unknown[][] = [
    [resource.entityName, 1, created.id, world.pmc.id, actor],
    [resource.entityName, 2, created.id, world.pmc.id, actor],
  ];
  if (resource.deletable !== false) {
    const deleted = await api.fetch(`${resource.path}/${created.id}`, { method: 'DELETE', token });
    expect(deleted.status).toBe(204);
    expected.push([resource.entityName, 3, created.id, world.pmc.id, actor]);
  }

  const changes = await api.db.knex('entity_changes').orderBy('id').select('*');
  expect(
    changes.map((c) => [c.entity_name, c.type, c.entity_id, c.initiator_party_id, c.initiator_account_id]),
  ).toEqual(expected);
  expect(changes[0].entity).toEqual(created);
  expect(changes[1].entity).toEqual(patched);
  if (resource.deletable !== false) {
    expect(changes[2].entity).toEqual({
      ...patched,
      lastModified: expect.any(String),
      deleted: expect.any(String),
    });
  }

  const webhooks = await api.db
    .knex('webhooks')
    .orderBy('id')
    .select('registration_id', 'state', 'entity_change_id', 'group_key');
  const expectedWebhooks = [
    { registration_id: all, state: 1, entity_change_id: changes[0].id, group_key: null },
    { registration_id: all, state: 1, entity_change_id: changes[1].id, group_key: null },
    { registration_id: updatesOnly, state: 1, entity_change_id: changes[1].id, group_key: null },
  ];
  if (resource.deletable !== false) {
    expectedWebhooks.push({
      registration_id: all,
      state: 1,
      entity_change_id: changes[2].id,
      group_key: null,
    });
  }
  expect(webhooks).toEqual(expectedWebhooks);
  expect(webhooks.some((w) => w.registration_id === foreign || w.registration_id === otherEntity)).toBe(
    false,
  );
  return { created };
}

/**
 * A refused write records nothing: after `refuse` (a request that must fail), the resource's
 * table, entity_changes and webhooks hold as many rows as before, with a subscribed registration.
 */
export async function expectNothingCaptured(
  api: TestApi,
  world: World,
  entityName: string,
  table: string,
  refuse: () => Promise<void>,
): Promise<void> {
  await subscribe(api, world.pmc.id, entityName);
  const before = [
    await countRows(api, table),
    await countRows(api, 'entity_changes'),
    await countRows(api, 'webhooks'),
  ];
  await refuse();
  expect([
    await countRows(api, table),
    await countRows(api, 'entity_changes'),
    await countRows(api, 'webhooks'),
  ]).toEqual(before);
}
