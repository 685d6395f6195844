import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem } from '../../tests/support/http';
import { resetCapture, subscribe } from '../../tests/support/resources';
import { useTestApi } from '../../tests/support/api';
import { gen1Login } from '../../tests/support/gen1';
import { toGen1, type Gen1Record } from './gen1-view-service';
import { companiesView, flatsView, GEN1_VIEWS, ordersView, type Gen1View } from './gen1-views';

// Gen1 writes go through the Gen2 write path: the same entity_changes rows (snapshot, type,
// initiator) and the same webhooks as the equivalent Gen2 write.

const { api, world } = useTestApi({ world: true });
let gen1Token: string;
/** The estate written to, created through Gen2. */
const ids = { object: 0, emptyObject: 0, entrance: 0, flat: 0, otherFlat: 0, order: 0, company: 0 };

async function create(path: string, token: string, body: unknown): Promise<number> {
  const response = await api.fetch(path, { method: 'POST', token, json: body });
  expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
  return ((await response.json()) as { id: number }).id;
}

async function send(method: 'POST' | 'PUT' | 'PATCH', path: string, token: string, json: unknown) {
  const response = await api.fetch(path, { method, token, json });
  expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBe(200);
  return (await response.json()) as Record<string, unknown> & { id: number };
}

beforeAll(async () => {
  gen1Token = (await gen1Login(api, world.pmc.full.email)).access_token;
  const token = world.pmc.full.token;
  ids.object = await create('/api/properties', token, {
    name: 'Haus',
    street: 'W',
    postalCode: '1',
    city: 'B',
  });
  ids.emptyObject = await create('/api/properties', token, {
    name: 'Leer',
    street: 'W',
    postalCode: '1',
    city: 'B',
  });
  ids.entrance = await create('/api/entrances', token, { propertyId: ids.object, name: 'A' });
  ids.flat = await create('/api/units', token, { propertyId: ids.object, number: 'WE 1' });
  ids.order = await create('/api/processes', token, { title: 'Heizung' });
  ids.company = world.user.id;
  const otherObject = await create('/api/properties', world.otherPmc.full.token, {
    name: 'Fremd',
    street: 'W',
    postalCode: '1',
    city: 'B',
  });
  ids.otherFlat = await create('/api/units', world.otherPmc.full.token, {
    propertyId: otherObject,
    number: 'X',
  });
});
beforeEach(() => resetCapture(api));

/** The capture rows after `afterId` (up to `upToId`), without their own ids and times. */
async function capturedAfter(afterId: number, upToId = Number.MAX_SAFE_INTEGER) {
  const changes = await api.db
    .knex('entity_changes')
    .where('id', '>', afterId)
    .andWhere('id', '<=', upToId)
    .orderBy('id')
    .select('*');
  const webhooks = await api.db
    .knex('webhooks')
    .whereIn(
      'entity_change_id',
      changes.map((change) => change.id),
    )
    .orderBy('id')
    .select('*');
  return changes.map((change) => ({
    change: {
      entity_name: change.entity_name,
      type: change.type,
      entity_id: change.entity_id,
      entity: change.entity,
      initiator_party_id: change.initiator_party_id,
      initiator_account_id: change.initiator_account_id,
    },
    webhooks: webhooks
      .filter((webhook) => webhook.entity_change_id === change.id)
      .map((webhook) => ({
        registration_id: webhook.registration_id,
        event_id: webhook.event_id,
        state: webhook.state,
        group_key: webhook.group_key,
        group_seq: webhook.group_seq,
      })),
  }));
}

const lastChangeId = async () => {
  const [row] = await api.db.knex('entity_changes').max<{ max: string | null }[]>({ max: 'id' });
  return Number(row?.max ?? 0);
};

interface Case {
  view: Gen1View;
  entity: string;
  gen2Path: string;
  id: () => number;
  /** A Gen2 merge patch and the same change in Gen1 names. */
  gen2: () => Record<string, unknown>;
  gen1: () => Record<string, unknown>;
  /** A complete Gen1 PUT body and its Gen2 patch. */
  put: () => { gen1: Record<string, unknown>; gen2: Record<string, unknown> };
}

const CASES: Case[] = [
  {
    view: companiesView,
    entity: 'Party',
    gen2Path: '/api/parties',
    id: () => ids.company,
    gen2: () => ({ name: 'Familie Schmidt' }),
    gen1: () => ({ name: 'Familie Schmidt' }),
    put: () => ({
      gen1: { name: 'Familie Meier', managed_by_company_id: world.pmc.id, conference_enabled: false },
      gen2: { name: 'Familie Meier', managedByPartyId: world.pmc.id, conferenceEnabled: false },
    }),
  },
  {
    view: flatsView,
    entity: 'Unit',
    gen2Path: '/api/units',
    id: () => ids.flat,
    gen2: () => ({
      entranceId: ids.entrance,
      floor: 3,
      unitType: 'commercial',
      livingArea: 80.25,
      rooms: 3.5,
    }),
    gen1: () => ({
      entrance_id: ids.entrance,
      floor: 3,
      flat_type: 'commercial',
      living_area: 80.25,
      rooms: 3.5,
    }),
    put: () => ({
      gen1: {
        object_id: ids.object,
        entrance_id: null,
        number: 'WE 1a',
        floor: 0,
        flat_type: 'apartment',
        living_area: null,
        rooms: 2,
        notes: 'EG links',
      },
      gen2: {
        propertyId: ids.object,
        entranceId: null,
        number: 'WE 1a',
        floor: 0,
        unitType: 'apartment',
        livingArea: null,
        rooms: 2,
        notes: 'EG links',
      },
    }),
  },
  {
    view: ordersView,
    entity: 'Process',
    gen2Path: '/api/processes',
    id: () => ids.order,
    gen2: () => ({ status: 'completed', propertyId: ids.object, unitId: ids.flat, dueDate: '2025-04-01' }),
    gen1: () => ({ status: 'completed', object_id: ids.object, flat_id: ids.flat, due_date: '2025-04-01' }),
    put: () => ({
      gen1: {
        title: 'Heizung (neu)',
        description: null,
        status: 'in_progress',
        priority: 3,
        object_id: ids.object,
        flat_id: null,
        assignee_user_id: world.pmc.full.id,
        due_date: null,
      },
      gen2: {
        title: 'Heizung (neu)',
        description: null,
        status: 'in_progress',
        priority: 3,
        propertyId: ids.object,
        unitId: null,
        assigneeAccountId: world.pmc.full.id,
        dueDate: null,
      },
    }),
  },
];

describe.each(CASES.map((c) => [c.view.name, c] as const))('writes to /%s', (name, c) => {
  async function subscriptions() {
    return {
      all: await subscribe(api, world.pmc.id, c.entity),
      updates: await subscribe(api, world.pmc.id, c.entity, [2]),
      foreign: await subscribe(api, world.otherPmc.id, c.entity),
    };
  }

  it('PATCH records the same entity_changes and webhooks as the Gen2 PATCH', async () => {
    const registrations = await subscriptions();
    const start = await lastChangeId();
    const gen2 = await send('PATCH', `${c.gen2Path}/${c.id()}`, world.pmc.full.token, c.gen2());
    const middle = await lastChangeId();
    // the same values again, through Gen1: with the test clock standing still, the snapshot
    // must be identical to the byte
    const gen1 = await send('PATCH', `/${name}/${c.id()}`, gen1Token, c.gen1());
    expect(gen1).toEqual(toGen1(c.view.fields, gen2));

    const viaGen2 = await capturedAfter(start, middle);
    const viaGen1 = await capturedAfter(middle);
    expect(viaGen2).toHaveLength(1);
    expect(viaGen1).toEqual(viaGen2);
    expect(viaGen2[0]!.change).toEqual({
      entity_name: c.entity,
      type: 2,
      entity_id: c.id(),
      entity: gen2,
      initiator_party_id: world.pmc.id,
      initiator_account_id: world.pmc.full.id,
    });
    expect(viaGen2[0]!.webhooks.map((webhook) => webhook.registration_id).sort()).toEqual(
      [registrations.all, registrations.updates].sort(),
    );
  });

  it('PUT replaces every writable field, recording what the equivalent Gen2 PATCH records', async () => {
    await subscriptions();
    const { gen1: gen1Body, gen2: gen2Body } = c.put();
    const start = await lastChangeId();
    const gen1 = await send('PUT', `/${name}/${c.id()}`, gen1Token, gen1Body);
    const middle = await lastChangeId();
    const gen2 = await send('PATCH', `${c.gen2Path}/${c.id()}`, world.pmc.full.token, gen2Body);
    expect(gen1).toEqual(toGen1(c.view.fields, gen2));
    const viaGen1 = await capturedAfter(start, middle);
    const viaGen2 = await capturedAfter(middle);
    expect(viaGen1).toHaveLength(1);
    expect(viaGen1).toEqual(viaGen2);
    expect(viaGen1[0]!.change.entity).toEqual(gen2);
  });

  it('PUT needs every writable field (400 naming each missing one, nothing recorded)', async () => {
    const { gen1: full } = c.put();
    const [first, ...rest] = Object.keys(full);
    const partial = Object.fromEntries(rest.map((key) => [key, full[key]]));
    const start = await lastChangeId();
    const response = await api.fetch(`/${name}/${c.id()}`, {
      method: 'PUT',
      token: gen1Token,
      json: partial,
    });
    await expectProblem(response, 400, { errors: { [first!]: ['Required'] } });
    expect(await lastChangeId()).toBe(start);
  });

  it('an empty PATCH changes and records nothing, as in Gen2', async () => {
    const start = await lastChangeId();
    const response = await api.fetch(`/${name}/${c.id()}`, { method: 'PATCH', token: gen1Token, json: {} });
    expect(response.status).toBe(200);
    expect(await lastChangeId()).toBe(start);
  });

  it('refuses callers the Gen2 update refuses: no permission, wrong party type (403)', async () => {
    const bare = (await gen1Login(api, world.pmc.bare.email)).access_token;
    const contractor = (await gen1Login(api, world.contractor.full.email)).access_token;
    for (const token of [bare, contractor]) {
      const response = await api.fetch(`/${name}/${c.id()}`, { method: 'PATCH', token, json: c.gen1() });
      await expectProblem(response, 403);
    }
  });
});

describe('Gen1 write rules', () => {
  it('answers 404 in Gen1 terms for a record out of scope', async () => {
    const response = await api.fetch(`/flats/${ids.otherFlat}`, {
      method: 'PATCH',
      token: gen1Token,
      json: { floor: 1 },
    });
    await expectProblem(response, 404, { detail: `flat ${ids.otherFlat} was not found` });
  });

  it('names Gen1 fields in validation errors, also those of Gen2 rules', async () => {
    await expectProblem(
      await api.fetch(`/flats/${ids.flat}`, {
        method: 'PATCH',
        token: gen1Token,
        json: { flat_type: 'castle' },
      }),
      400,
      { errors: { flat_type: [expect.any(String)] } },
    );
    // a flat of another object: the Gen2 rule says unitId, Gen1 hears flat_id
    const response = await api.fetch(`/orders/${ids.order}`, {
      method: 'PATCH',
      token: gen1Token,
      json: { object_id: ids.emptyObject, flat_id: ids.flat },
    });
    const problem = await expectProblem(response, 400, { errors: { flat_id: [expect.any(String)] } });
    expect(problem.detail).toMatch(/^flat_id: /);
  });

  it('refuses fields a Gen2 patch may not change: the owner, the company type', async () => {
    await expectProblem(
      await api.fetch(`/flats/${ids.flat}`, { method: 'PATCH', token: gen1Token, json: { company_id: 1 } }),
      400,
      { errors: { company_id: ['Unknown field'] } },
    );
    await expectProblem(
      await api.fetch(`/companies/${ids.company}`, {
        method: 'PATCH',
        token: gen1Token,
        json: { company_type: 5 },
      }),
      400,
      { errors: { company_type: ['Unknown field'] } },
    );
    await expectProblem(
      await api.fetch(`/orders/${ids.order}`, {
        method: 'PATCH',
        token: gen1Token,
        json: { completed_at: null },
      }),
      400,
      { errors: { completed_at: ['Unknown field'] } },
    );
  });

  it('keeps the Gen2 party rules: a PMC cannot move a company to another manager (403)', async () => {
    const response = await api.fetch(`/companies/${ids.company}`, {
      method: 'PATCH',
      token: gen1Token,
      json: { managed_by_company_id: null },
    });
    await expectProblem(response, 403);
  });

  it('serves no writes on read-only views (405)', async () => {
    const response = await api.fetch(`/users/${world.pmc.full.id}`, {
      method: 'PATCH',
      token: gen1Token,
      json: {},
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('HEAD, GET');
  });

  it('answers the updated record as its list shows it', async () => {
    const record = (await send('PATCH', `/orders/${ids.order}`, gen1Token, { priority: 4 })) as Gen1Record;
    expect(record).not.toHaveProperty('timeline');
    expect(Object.keys(record)).toEqual(Object.keys(ordersView.fields));
  });
});

/** The Gen1 names of a Gen2 body of `view` (the inverse of toGen2). */
function inGen1Names(view: Gen1View, gen2: Record<string, unknown>): Record<string, unknown> {
  const names = Object.fromEntries(Object.entries(view.fields).map(([gen1, name]) => [name, gen1]));
  return Object.fromEntries(Object.entries(gen2).map(([field, value]) => [names[field]!, value]));
}

/** The capture rows of one record, with its id (which differs between two creates) taken out. */
function withoutId(captured: Awaited<ReturnType<typeof capturedAfter>>) {
  return captured.map(({ change, webhooks }) => ({
    change: { ...change, entity_id: undefined, entity: { ...change.entity, id: undefined } },
    webhooks: webhooks.map(({ registration_id, state, group_seq }) => ({
      registration_id,
      state,
      group_seq,
    })),
  }));
}

/**
 * Per writable view: a Gen2 create body and a Gen2 merge patch (in Gen2 names; the Gen1 bodies
 * are the same under the view's names). Every view whose source has a Gen2 resource must have
 * one, so a view that gains writes gains these tests.
 */
const VERB_CASES: Record<
  string,
  { create: (n: number) => Record<string, unknown>; patch: () => Record<string, unknown> }
> = {
  companies: {
    create: () => ({ type: 7, name: 'Familie Neu' }),
    patch: () => ({ name: 'Familie Neu-Meier' }),
  },
  companycontact: {
    create: () => ({ type: 'email', value: 'neu@example.de', label: 'Büro' }),
    patch: () => ({ value: 'neu2@example.de', isPrimary: true }),
  },
  objects: {
    create: () => ({
      name: 'Neubau',
      street: 'Allee',
      houseNumber: '3',
      postalCode: '10115',
      city: 'Berlin',
    }),
    patch: () => ({ name: 'Neubau Nord', yearBuilt: 1999 }),
  },
  flats: {
    create: (n) => ({ propertyId: ids.object, number: `WE 9-${n}`, floor: 1 }),
    patch: () => ({ number: 'WE 9a', rooms: 2.5 }),
  },
  flatcompany: {
    create: () => ({
      unitId: ids.flat,
      contractPartyId: world.user.id,
      contractType: 'tenancy',
      startDate: '2024-01-01',
      monthlyRent: 900,
    }),
    patch: () => ({ monthlyRent: 950.5, notes: 'Staffel' }),
  },
  orders: {
    create: () => ({ title: 'Dach', propertyId: ids.object, dueDate: '2025-05-01' }),
    patch: () => ({ priority: 2, description: 'undicht' }),
  },
  ordertimeline: {
    create: () => ({ processId: ids.order, text: 'Angerufen' }),
    patch: () => ({ text: 'Zweimal angerufen' }),
  },
  ordercontractor: {
    create: () => ({
      processId: ids.order,
      contractorPartyId: world.contractor.id,
      title: 'Reparatur',
      cost: 99.5,
    }),
    patch: () => ({ title: 'Reparatur Dach', cost: 120 }),
  },
  inbox: {
    create: () => ({ connectedPartyId: world.user.id, report: '<p>Kalt</p>', subject: 'Heizung' }),
    patch: () => ({ subject: 'Heizung kalt', priority: 1 }),
  },
  companynews: {
    create: () => ({ title: 'Info', body: 'Wasser aus' }),
    patch: () => ({ title: 'Info (neu)' }),
  },
};

/** Numbers for create bodies whose values must be unique (a flat's number within its object). */
let serial = 0;

const WRITABLE = GEN1_VIEWS.filter((view) => view.source.definition);

it('covers every Gen1 view with a Gen2 resource (and only those take writes)', async () => {
  expect(WRITABLE.map((view) => view.name).sort()).toEqual(Object.keys(VERB_CASES).sort());
  for (const view of GEN1_VIEWS.filter((candidate) => !candidate.source.definition)) {
    const response = await api.fetch(`/${view.name}`, { method: 'POST', token: gen1Token, json: {} });
    expect(response.status, view.name).toBe(405);
  }
});

describe.each(WRITABLE.map((view) => [view.name, view] as const))('every verb of /%s', (name, view) => {
  const def = view.source.definition!;
  const c = VERB_CASES[name]!;
  const gen2Create = async (n = ++serial) =>
    (await send('POST', def.path, world.pmc.full.token, c.create(n))) as Record<string, unknown> & {
      id: number;
    };
  const subscriptions = () => subscribe(api, world.pmc.id, def.name);

  it('POST records the same entity change and webhooks as the Gen2 create', async () => {
    const registration = await subscriptions();
    const start = await lastChangeId();
    const n = ++serial;
    const gen2 = await gen2Create(n);
    const middle = await lastChangeId();
    // the same body again (what must be unique is unique among live records: delete the first)
    if (def.deletable !== false) {
      await api.fetch(`${def.path}/${gen2.id}`, { method: 'DELETE', token: world.pmc.full.token });
    }
    const beforeGen1 = await lastChangeId();
    const gen1 = await send('POST', `/${name}`, gen1Token, inGen1Names(view, c.create(n)));
    expect(gen1).toEqual({ ...toGen1(view.fields, gen2), id: gen1.id });
    const viaGen2 = await capturedAfter(start, middle);
    const viaGen1 = await capturedAfter(beforeGen1);
    expect(viaGen1).toHaveLength(1);
    expect(viaGen1[0]!.change).toMatchObject({ entity_name: def.name, type: 1, entity_id: gen1.id });
    expect(viaGen1[0]!.webhooks.map((webhook) => webhook.registration_id)).toEqual([registration]);
    expect(withoutId(viaGen1)).toEqual(withoutId(viaGen2));
    expect(await getJsonOk(`/${name}/${gen1.id}`)).toMatchObject(gen1);
  });

  it('PATCH and PUT record the same entity change and webhooks as the Gen2 PATCH', async () => {
    await subscriptions();
    const record = await gen2Create();
    const start = await lastChangeId();
    const gen2 = await send('PATCH', `${def.path}/${record.id}`, world.pmc.full.token, c.patch());
    const middle = await lastChangeId();
    const gen1 = await send('PATCH', `/${name}/${record.id}`, gen1Token, inGen1Names(view, c.patch()));
    expect(gen1).toEqual(toGen1(view.fields, gen2));
    expect(await capturedAfter(middle)).toEqual(await capturedAfter(start, middle));

    // PUT: every patchable field, as the record now holds them
    const patchable = Object.keys(def.write.shape).filter(
      (field) => field !== 'partyId' && !(def.createOnly ?? []).includes(field),
    );
    const full = Object.fromEntries(patchable.map((field) => [field, gen2[field] ?? null]));
    const beforePut = await lastChangeId();
    const put = await send('PUT', `/${name}/${record.id}`, gen1Token, inGen1Names(view, full));
    const afterPut = await lastChangeId();
    const same = await send('PATCH', `${def.path}/${record.id}`, world.pmc.full.token, full);
    expect(put).toEqual(toGen1(view.fields, same));
    const viaPut = await capturedAfter(beforePut, afterPut);
    expect(viaPut).toHaveLength(1);
    expect(await capturedAfter(afterPut)).toEqual(viaPut);
  });

  if (def.deletable !== false) {
    it('DELETE records the same entity change and webhooks as the Gen2 delete', async () => {
      const registration = await subscriptions();
      // two records of the same body, one after the other (what must be unique is, among live ones)
      const n = ++serial;
      const first = await gen2Create(n);
      const start = await lastChangeId();
      const gen2 = await api.fetch(`${def.path}/${first.id}`, {
        method: 'DELETE',
        token: world.pmc.full.token,
      });
      expect(gen2.status).toBe(204);
      const middle = await lastChangeId();
      const second = await gen2Create(n);
      const beforeGen1 = await lastChangeId();
      const gen1 = await api.fetch(`/${name}/${second.id}`, { method: 'DELETE', token: gen1Token });
      expect(gen1.status, await gen1.clone().text()).toBe(204);
      const viaGen1 = await capturedAfter(beforeGen1);
      expect(viaGen1).toHaveLength(1);
      expect(viaGen1[0]!.change).toMatchObject({ entity_name: def.name, type: 3, entity_id: second.id });
      expect(viaGen1[0]!.webhooks.map((webhook) => webhook.registration_id)).toEqual([registration]);
      expect(withoutId(viaGen1)).toEqual(withoutId(await capturedAfter(start, middle)));
      await expectProblem(await api.fetch(`/${name}/${second.id}`, { token: gen1Token }), 404);
      await expectProblem(
        await api.fetch(`/${name}/${second.id}`, { method: 'DELETE', token: gen1Token }),
        404,
        {
          detail: `${view.noun} ${second.id} was not found`,
        },
      );
    });
  } else {
    it('takes no DELETE, as Gen2 deletes none (405)', async () => {
      const record = await gen2Create();
      const response = await api.fetch(`/${name}/${record.id}`, { method: 'DELETE', token: gen1Token });
      expect(response.status).toBe(405);
    });
  }

  it('refuses the callers and the records the Gen2 writes refuse (403, 404)', async () => {
    const record = await gen2Create();
    const bare = (await gen1Login(api, world.pmc.bare.email)).access_token;
    const user = (await gen1Login(api, world.user.full.email)).access_token;
    const other = (await gen1Login(api, world.otherPmc.full.email)).access_token;
    const start = await lastChangeId();
    for (const token of [bare, user]) {
      await expectProblem(
        await api.fetch(`/${name}`, { method: 'POST', token, json: inGen1Names(view, c.create(++serial)) }),
        403,
      );
      await expectProblem(
        await api.fetch(`/${name}/${record.id}`, {
          method: 'PATCH',
          token,
          json: inGen1Names(view, c.patch()),
        }),
        403,
      );
      if (def.deletable !== false) {
        await expectProblem(await api.fetch(`/${name}/${record.id}`, { method: 'DELETE', token }), 403);
      }
    }
    // another company's record is out of scope: 404, as in Gen2
    await expectProblem(
      await api.fetch(`/${name}/${record.id}`, {
        method: 'PATCH',
        token: other,
        json: inGen1Names(view, c.patch()),
      }),
      404,
      { detail: `${view.noun} ${record.id} was not found` },
    );
    if (def.deletable !== false) {
      await expectProblem(await api.fetch(`/${name}/${record.id}`, { method: 'DELETE', token: other }), 404);
    }
    expect(await lastChangeId()).toBe(start);
  });
});

async function getJsonOk(path: string) {
  const response = await api.fetch(path, { token: gen1Token });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}
