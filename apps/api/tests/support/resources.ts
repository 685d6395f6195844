/**
 * Shared helpers of the resource tests: registrations subscribed by the testkit's seed (so a test of
 * a resource does not depend on the registration API), writes through the API that must succeed,
 * and what change capture wrote (entity_changes, webhooks), including the contracts every
 * resource's writes are held to.
 */
import { WebhookState, type PermissionResource } from '@platform/shared';
import { expect } from 'vitest';
import { seedRegistration } from '@platform/testkit';
import { expectProblem } from './http';
import { expectAccessRules, type TestApi, type World } from './api';

/** A live registration of `partyId` subscribed to `entityName` events (seeded, not through the API); its id. */
export async function subscribe(
  api: TestApi,
  partyId: number,
  entityName: string,
  types: readonly number[] = [1, 2, 3],
  shouldGroup = false,
): Promise<number> {
  const { id } = await seedRegistration(api.db.knex, {
    partyId,
    targetUrl: 'http://127.0.0.1:9/hook',
    shouldGroup,
    events: types.map((type) => ({ entityName, type })),
  });
  return id;
}

/** Empties the change-capture tables (and `alsoTables`), so each test counts only its own rows. */
export async function resetCapture(api: TestApi, ...alsoTables: string[]): Promise<void> {
  const tables = [
    'webhooks',
    'webhook_groups',
    'entity_changes',
    'webhook_events',
    'webhook_registrations',
    ...alsoTables,
  ];
  await api.db.knex.raw(`truncate ${tables.join(', ')} cascade`);
}

/** Row count of `table`. */
export async function countRows(api: TestApi, table: string): Promise<number> {
  const [row] = await api.db.knex(table).count<{ n: string }[]>({ n: '*' });
  return Number(row?.n);
}

/** A property of `partyId`, inserted directly (for tests of resources that only refer to one). */
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

type Entity = Record<string, unknown> & { id: number };

/** `method` `path` as `token` (with `json` as the body when given), asserting a 200; the JSON answer. */
export async function requestOk<T = Entity>(
  api: TestApi,
  method: string,
  path: string,
  token: string,
  json?: unknown,
): Promise<T> {
  const response = await api.fetch(path, { method, token, ...(json === undefined ? {} : { json }) });
  expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBe(200);
  return (await response.json()) as T;
}

/** POST `json` to `path` as `token`, asserting a 200; the JSON answer (a created row, a page). */
export function postOk<T = Entity>(api: TestApi, path: string, token: string, json: unknown): Promise<T> {
  return requestOk<T>(api, 'POST', path, token, json);
}

/** PATCH `path` with `json` as `token`, asserting a 200; the updated read shape. */
export function patchOk<T = Entity>(api: TestApi, path: string, token: string, json: unknown): Promise<T> {
  return requestOk<T>(api, 'PATCH', path, token, json);
}

/** DELETE `path` (one row) as `token` answers 204, and reading it afterwards answers 404. */
export async function expectDeleted(api: TestApi, path: string, token: string): Promise<void> {
  expect((await api.fetch(path, { method: 'DELETE', token })).status).toBe(204);
  expect((await api.fetch(path, { token })).status).toBe(404);
}

/** The ids of a page or array answer, asserting a 200. */
export async function idsOf(response: Response): Promise<number[]> {
  expect(response.status, await response.clone().text()).toBe(200);
  const body = (await response.json()) as { items: { id: number }[] } | { id: number }[];
  return (Array.isArray(body) ? body : body.items).map((item) => item.id);
}

/**
 * Asserts `created` (a POST's answer to `path`) reads back unchanged, is listed when sorted by
 * `sortBy`, and is the only match of a search by `filters`.
 */
export async function expectReadListedFound(
  api: TestApi,
  path: string,
  token: string,
  created: Entity,
  sortBy: string,
  filters: unknown[],
): Promise<void> {
  expect(await (await api.fetch(`${path}/${created.id}`, { token })).json()).toEqual(created);
  expect(await idsOf(await api.fetch(`${path}?SortByAttributeName=${sortBy}`, { token }))).toContain(
    created.id,
  );
  const search = await api.fetch(`${path}/search`, { method: 'POST', token, json: { filters } });
  expect(await idsOf(search)).toEqual([created.id]);
}

/** The id of the newest entity_changes row (0 for none), so a test can look at the changes it caused. */
export async function lastChangeId(api: TestApi): Promise<number> {
  const [row] = await api.db.knex('entity_changes').max<{ max: number | null }[]>({ max: 'id' });
  return row?.max ?? 0;
}

/**
 * The entity_changes rows after `sinceId`, in order, and each summed up as
 * [entityName, type, entityId, initiatorPartyId, initiatorAccountId].
 */
export async function capturedChanges(api: TestApi, sinceId = 0) {
  const rows = await api.db.knex('entity_changes').where('id', '>', sinceId).orderBy('id').select('*');
  return {
    rows,
    summary: rows.map((c) => [
      c.entity_name,
      c.type,
      c.entity_id,
      c.initiator_party_id,
      c.initiator_account_id,
    ]),
  };
}

/** The webhooks rows in order, with `columns`; only those of the changes `changeIds` when given. */
export async function webhookRows(
  api: TestApi,
  options: { changeIds?: readonly number[]; columns?: readonly string[] } = {},
): Promise<Record<string, unknown>[]> {
  const query = api.db
    .knex('webhooks')
    .orderBy('id')
    .select(...(options.columns ?? ['registration_id', 'state', 'entity_change_id']));
  if (options.changeIds) query.whereIn('entity_change_id', [...options.changeIds]);
  return query;
}

/**
 * The row `id` of `path` is outside the scope of `token`'s caller, as the registry treats it
 * (docs/api.md#scope-of-data): reading, patching and deleting it answer 404 ProblemDetails
 * (deleting is not tried for a resource without a delete), and a batch read leaves it out while
 * answering the `visible` rows, in order.
 */
export async function expectOutOfScope(
  api: TestApi,
  path: string,
  token: string,
  id: number,
  resource: { patch: unknown; visible?: readonly number[]; deletable?: boolean },
): Promise<void> {
  const detail = new RegExp(` ${id} was not found$`);
  await expectProblem(await api.fetch(`${path}/${id}`, { token }), 404, { detail });
  await expectProblem(
    await api.fetch(`${path}/${id}`, { method: 'PATCH', token, json: resource.patch }),
    404,
    { detail },
  );
  if (resource.deletable !== false) {
    await expectProblem(await api.fetch(`${path}/${id}`, { method: 'DELETE', token }), 404, { detail });
  }
  const visible = resource.visible ?? [];
  const batch = await api.fetch(`${path}/batch`, { method: 'POST', token, json: { ids: [id, ...visible] } });
  expect(await idsOf(batch)).toEqual(visible);
}

/**
 * The guards the registry derives for the resource at `path` (docs/api.md#permissions), per
 * operation: every party type reads (list, search, batch read, read) with `<permission>.Read`;
 * Admin and Property Management Company create, update and delete with
 * `<permission>.Create/Update/Delete`; other party types get a 403, and so does an allowed caller
 * without the permission (Users are not checked). Reads, patches and deletes aim at rows the Admin
 * creates for `world.pmc` (one per patch and delete request).
 */
export async function expectRegistryAccessRules(
  api: TestApi,
  world: World,
  path: string,
  permission: PermissionResource,
  resource: {
    /** A valid create body; a function when every create needs fresh data (a unique name). */
    body: unknown;
    /** A valid merge patch. */
    patch: unknown;
    /** The Admin's create body of an in-scope row; by default `body` with `partyId: world.pmc.id`. */
    inScope?: () => unknown;
    /** False for a resource without a delete (ProcessFeed). */
    deletable?: boolean;
  },
): Promise<void> {
  const { body } = resource;
  const inScopeBody =
    resource.inScope ??
    (() => ({ ...((typeof body === 'function' ? body(world.pmc) : body) as object), partyId: world.pmc.id }));
  const inScope = async () =>
    `${path}/${(await postOk(api, path, world.admin.full.token, inScopeBody())).id}`;
  const readers = { allow: [1, 2, 3, 5, 7, 13, 14], permission: `${permission}.Read` } as const;
  const writers = { allow: [1, 2] } as const;
  const row = await inScope();
  await expectAccessRules(api, world, { method: 'GET', path, ...readers });
  await expectAccessRules(api, world, { method: 'POST', path: `${path}/search`, body: {}, ...readers });
  await expectAccessRules(api, world, {
    method: 'POST',
    path: `${path}/batch`,
    body: { ids: [1] },
    ...readers,
  });
  await expectAccessRules(api, world, { method: 'GET', path: row, ...readers });
  await expectAccessRules(api, world, {
    method: 'POST',
    path,
    body,
    ...writers,
    permission: `${permission}.Create`,
  });
  await expectAccessRules(api, world, {
    method: 'PATCH',
    path: inScope,
    body: resource.patch,
    ...writers,
    permission: `${permission}.Update`,
  });
  if (resource.deletable === false) return;
  await expectAccessRules(api, world, {
    method: 'DELETE',
    path: inScope,
    ...writers,
    permission: `${permission}.Delete`,
  });
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
): Promise<{ created: Entity }> {
  const all = await subscribe(api, world.pmc.id, resource.entityName);
  const updatesOnly = await subscribe(api, world.pmc.id, resource.entityName, [2]);
  const otherEntity = await subscribe(api, world.pmc.id, 'Property');
  const foreign = await subscribe(api, world.otherPmc.id, resource.entityName);
  const token = world.pmc.full.token;
  const actor = world.pmc.full.id;

  const created = await postOk(api, resource.path, token, resource.body);
  const patched = await patchOk(api, `${resource.path}/${created.id}`, token, resource.patch);
  const expected: unknown[][] = [
    [resource.entityName, 1, created.id, world.pmc.id, actor],
    [resource.entityName, 2, created.id, world.pmc.id, actor],
  ];
  if (resource.deletable !== false) {
    const deleted = await api.fetch(`${resource.path}/${created.id}`, { method: 'DELETE', token });
    expect(deleted.status).toBe(204);
    expected.push([resource.entityName, 3, created.id, world.pmc.id, actor]);
  }

  const { rows: changes, summary } = await capturedChanges(api);
  expect(summary).toEqual(expected);
  expect(changes[0].entity).toEqual(created);
  expect(changes[1].entity).toEqual(patched);
  if (resource.deletable !== false) {
    expect(changes[2].entity).toEqual({
      ...patched,
      lastModified: expect.any(String),
      deleted: expect.any(String),
    });
  }

  const webhooks = await webhookRows(api, {
    columns: ['registration_id', 'state', 'entity_change_id', 'group_key'],
  });
  const expectedWebhooks = [
    { registration_id: all, state: WebhookState.Created, entity_change_id: changes[0].id, group_key: null },
    { registration_id: all, state: WebhookState.Created, entity_change_id: changes[1].id, group_key: null },
    {
      registration_id: updatesOnly,
      state: WebhookState.Created,
      entity_change_id: changes[1].id,
      group_key: null,
    },
  ];
  if (resource.deletable !== false) {
    expectedWebhooks.push({
      registration_id: all,
      state: WebhookState.Created,
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

/** How many ids `table`'s id sequence has handed out: it counts rolled-back inserts too. */
async function idsHandedOut(api: TestApi, table: string): Promise<number> {
  const result = await api.db.knex.raw(
    "select coalesce(pg_sequence_last_value(pg_get_serial_sequence(?, 'id')::regclass), 0) as value",
    [table],
  );
  return Number(result.rows[0].value);
}

/**
 * A rolled-back write leaves no change and no webhook (change capture shares the write's transaction): while a deferred constraint
 * trigger fails every insert and update of `table` at commit, each of `writes` (requests the API
 * would otherwise answer with success) must answer 500, and `table`, entity_changes and webhooks
 * must hold exactly what they held before. The id sequences of entity_changes and webhooks prove
 * each write got as far as capturing its change and its webhook before it was rolled back; a
 * registration of `partyId` (the writer's party) subscribed to every event of `entityName` makes
 * sure there was a webhook to capture.
 */
export async function expectRolledBack(
  api: TestApi,
  resource: {
    partyId: number;
    entityName: string;
    table: string;
    writes: readonly (() => Promise<Response>)[];
  },
): Promise<void> {
  await subscribe(api, resource.partyId, resource.entityName);
  const state = async () => ({
    rows: await api.db.knex(resource.table).orderBy('id').select('*'),
    entityChanges: await countRows(api, 'entity_changes'),
    webhooks: await countRows(api, 'webhooks'),
  });
  const before = await state();
  const captured = async () => [
    await idsHandedOut(api, 'entity_changes'),
    await idsHandedOut(api, 'webhooks'),
  ];
  const [changesBefore, webhooksBefore] = await captured();
  const trigger = `fail_at_commit_${resource.table}`;
  await api.db.knex.raw(`
    create or replace function fail_at_commit() returns trigger language plpgsql as
      $$ begin raise exception 'refused at commit by the test'; end $$;
    create constraint trigger ${trigger} after insert or update on ${resource.table}
      deferrable initially deferred for each row execute function fail_at_commit();
  `);
  try {
    for (const write of resource.writes) {
      const response = await write();
      expect(response.status, await response.text()).toBe(500);
    }
  } finally {
    await api.db.knex.raw(`drop trigger ${trigger} on ${resource.table}; drop function fail_at_commit();`);
  }
  const [changesAfter, webhooksAfter] = await captured();
  expect(changesAfter! - changesBefore!).toBeGreaterThanOrEqual(resource.writes.length);
  expect(webhooksAfter! - webhooksBefore!).toBeGreaterThanOrEqual(resource.writes.length);
  expect(await state()).toEqual(before);
}
