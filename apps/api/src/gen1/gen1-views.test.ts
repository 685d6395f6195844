import { ALL_PARTY_TYPES, permissionByName } from '@platform/shared';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../../tests/support/http';
import { buildAccount, buildParty, useTestApi } from '../../tests/support/api';
import type { z } from 'zod';
import { GEN1_ROUTES, UNSERVED_VIEWS } from './gen1-routes';
import { gen1Login, getJson } from '../../tests/support/gen1';
import { TIMELINE_EMBED_LIMIT, toGen1, type Gen1Record } from './gen1-view-service';
import { entranceFields, flatsView, GEN1_VIEWS, orderTimelineView, type Gen1View } from './gen1-views';

const { api, world } = useTestApi({ world: true });
/** Gen1 access tokens by world party (full accounts). */
const gen1 = { pmc: '', otherPmc: '', user: '', contractor: '', admin: '' };

/** What each party holds, by Gen1 view name: ids created through the Gen2 API. */
type Holdings = Record<string, number[]>;
const pmc: Holdings = {};
const other: Holdings = {};

/** The Gen2 collection path behind each Gen1 view (docs/gen1-to-gen2.md#what-each-gen1-view-becomes-in-gen2). */
const GEN2_PATHS: Record<string, string> = {
  companies: '/api/parties',
  companycontact: '/api/contact-details',
  users: '/api/accounts',
  usercontact: '/api/account-contact-details',
  objects: '/api/properties',
  flats: '/api/units',
  flatcompany: '/api/unit-contracts',
  orders: '/api/processes',
  ordertimeline: '/api/process-feed',
  ordercontractor: '/api/work-orders',
  inbox: '/api/inquiries',
  companynews: '/api/notices',
};

async function create(path: string, token: string, body: unknown): Promise<number> {
  const response = await api.fetch(path, { method: 'POST', token, json: body });
  expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
  return ((await response.json()) as { id: number }).id;
}

const add = (holdings: Holdings, view: string, id: number) => (holdings[view] ??= []).push(id);

/** A small estate of one PMC, written through the Gen2 API with `token`. */
async function buildEstate(holdings: Holdings, token: string, tenantPartyId: number, contractorId?: number) {
  const object = await create('/api/properties', token, {
    name: 'Haus',
    street: 'Weg',
    houseNumber: '1',
    postalCode: '10115',
    city: 'Berlin',
  });
  add(holdings, 'objects', object);
  const entrance = await create('/api/entrances', token, { propertyId: object, name: 'Aufgang A' });
  add(holdings, 'entrances', entrance);
  add(
    holdings,
    'entrances',
    await create('/api/entrances', token, { propertyId: object, name: 'Aufgang B' }),
  );
  const flat = await create('/api/units', token, {
    propertyId: object,
    entranceId: entrance,
    number: 'WE 1',
    floor: 2,
    livingArea: 71.5,
    rooms: 2.5,
  });
  add(holdings, 'flats', flat);
  add(holdings, 'flats', await create('/api/units', token, { propertyId: object, number: 'WE 2' }));
  add(
    holdings,
    'objects',
    await create('/api/properties', token, { name: 'Leer', street: 'Weg', postalCode: '1', city: 'B' }),
  );
  add(
    holdings,
    'flatcompany',
    await create('/api/unit-contracts', token, {
      unitId: flat,
      contractPartyId: tenantPartyId,
      contractType: 'tenancy',
      startDate: '2024-01-01',
      monthlyRent: 850.5,
    }),
  );
  const order = await create('/api/processes', token, {
    title: 'Heizung defekt',
    propertyId: object,
    unitId: flat,
    dueDate: '2025-03-01',
  });
  add(holdings, 'orders', order);
  for (const text of ['first', 'second', 'third']) {
    add(holdings, 'ordertimeline', await create('/api/process-feed', token, { processId: order, text }));
  }
  if (contractorId !== undefined) {
    add(
      holdings,
      'ordercontractor',
      await create('/api/work-orders', token, {
        processId: order,
        contractorPartyId: contractorId,
        title: 'Reparatur',
        cost: 120.25,
      }),
    );
  }
  add(
    holdings,
    'inbox',
    await create('/api/inquiries', token, {
      connectedPartyId: tenantPartyId,
      report: '<p>Kalt</p>',
      subject: 'Heizung',
      connectedPropertyId: object,
      connectedUnitId: flat,
      associatedProcessId: order,
    }),
  );
  add(holdings, 'companynews', await create('/api/notices', token, { title: 'Info', body: 'Wasser aus' }));
  add(
    holdings,
    'companycontact',
    await create('/api/contact-details', token, { type: 'email', value: 'a@b.de' }),
  );
  add(
    holdings,
    'companycontact',
    await create('/api/contact-details', token, { type: 'phone', value: '+49 30 1' }),
  );
}

beforeAll(async () => {
  for (const party of ['pmc', 'otherPmc', 'user', 'contractor', 'admin'] as const) {
    gen1[party] = (await gen1Login(api, world[party].full.email)).access_token;
  }
  await buildEstate(pmc, world.pmc.full.token, world.user.id, world.contractor.id);
  const otherContractor = await buildParty(api.deps, { type: 5, managedByPartyId: world.otherPmc.id });
  await buildEstate(other, world.otherPmc.full.token, world.otherUser.id, otherContractor.id);
  pmc.companies = [world.pmc.id, world.contractor.id, world.user.id, world.broker.id];
  other.companies = [world.otherPmc.id, world.otherUser.id, otherContractor.id];
  pmc.users = [world.pmc.full.id, world.pmc.bare.id];
  other.users = [world.otherPmc.full.id, world.otherPmc.bare.id];
  for (const [holdings, party] of [
    [pmc, world.pmc],
    [other, world.otherPmc],
  ] as const) {
    holdings.usercontact = [
      await create('/api/account-contact-details', party.full.token, {
        accountId: party.full.id,
        type: 'email',
        value: 'me@example.com',
      }),
    ];
  }
});

const EMBEDDED = ['entrances', 'flats', 'timeline', 'timeline_total'];
const withoutEmbeds = (record: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(record).filter(([key]) => !EMBEDDED.includes(key)));

/** The Gen2 read of `id`, with the Gen2 token of the same account. */
const gen2Read = (view: Gen1View, id: number, token = world.pmc.full.token) =>
  getJson(api, `${GEN2_PATHS[view.name]}/${id}`, token);

describe.each(GEN1_VIEWS.map((view) => [view.name, view] as const))('/%s', (name, view) => {
  it('lists the caller’s records as the Gen2 reads show them, under snake_case Gen1 names', async () => {
    const list = await getJson<{ data: Gen1Record[]; paginated: boolean; total: number }>(
      api,
      `/${name}?page_size=100`,
      gen1.pmc,
    );
    expect(list.paginated).toBe(true);
    const ids = list.data.map((record) => record.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids).toEqual(expect.arrayContaining(pmc[name]!));
    expect(list.total).toBe(list.data.length);
    for (const record of list.data) {
      for (const key of Object.keys(record)) expect(key).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(Object.keys(withoutEmbeds(record))).toEqual(Object.keys(view.fields));
      expect(withoutEmbeds(record)).toEqual(toGen1(view.fields, await gen2Read(view, record.id)));
    }
  });

  it('answers what its OpenAPI entries document: the list and the single read, embeds included', async () => {
    const documented = (path: string) =>
      (
        GEN1_ROUTES.find((route) => route.method === 'get' && route.path === path)!.response!
          .schema as z.ZodObject
      ).strict();
    const list = await getJson(api, `/${name}?page_size=100`, gen1.pmc);
    const listSchema = documented(`/${name}`);
    const record = (listSchema.shape.data as z.ZodArray<z.ZodObject>).element.strict();
    expect(() => listSchema.parse(list)).not.toThrow();
    for (const item of (list as { data: unknown[] }).data) record.parse(item);
    const one = await getJson(api, `/${name}/${pmc[name]![0]}`, gen1.pmc);
    documented(`/${name}/:id`).parse(one);
  });

  it('never shows another PMC’s records, in lists or by id (404)', async () => {
    const list = await getJson<{ data: Gen1Record[] }>(api, `/${name}?page_size=100`, gen1.pmc);
    const ids = list.data.map((record) => record.id);
    for (const id of other[name]!) {
      expect(ids).not.toContain(id);
      await expectProblem(await api.fetch(`/${name}/${id}`, { token: gen1.pmc }), 404, {
        detail: `${view.noun} ${id} was not found`,
      });
    }
    // and the other PMC sees its own
    const theirs = await getJson<{ data: Gen1Record[] }>(api, `/${name}?page_size=100`, gen1.otherPmc);
    expect(theirs.data.map((record) => record.id)).toEqual(expect.arrayContaining(other[name]!));
    for (const id of pmc[name]!) expect(theirs.data.map((record) => record.id)).not.toContain(id);
  });

  it('reads one record by id in the list’s shape (plus what it embeds)', async () => {
    const id = pmc[name]![0]!;
    const record = await getJson<Gen1Record>(api, `/${name}/${id}`, gen1.pmc);
    expect(withoutEmbeds(record)).toEqual(toGen1(view.fields, await gen2Read(view, id)));
  });

  it('pages: page and page_size, with the total, and says it is paginated', async () => {
    const all = await getJson<{ data: Gen1Record[]; total: number }>(api, `/${name}?page_size=100`, gen1.pmc);
    expect(all.total).toBeGreaterThanOrEqual(1);
    const second = await getJson(api, `/${name}?page=2&page_size=1`, gen1.pmc);
    expect(second).toEqual({
      data: all.total >= 2 ? [all.data[1]] : [],
      page: 2,
      page_size: 1,
      total: all.total,
      total_pages: all.total,
      paginated: true,
    });
  });
});

describe('list query', () => {
  it('defaults to page 1 of 20', async () => {
    const list = await getJson(api, '/companies', gen1.admin);
    expect(list).toMatchObject({ page: 1, page_size: 20, paginated: true });
  });

  it('refuses a bad page, a page_size over 100, Gen2 paging names and unknown filters (400)', async () => {
    await expectProblem(await api.fetch('/flats?page=0', { token: gen1.pmc }), 400, {
      errors: { page: ['page must be at least 1'] },
    });
    await expectProblem(await api.fetch('/flats?page_size=101', { token: gen1.pmc }), 400, {
      errors: { page_size: ['page_size must be at most 100'] },
    });
    await expectProblem(await api.fetch('/flats?PageNumber=1', { token: gen1.pmc }), 400, {
      errors: { PageNumber: ['Unknown field'] },
    });
    await expectProblem(await api.fetch('/flats?order_id=1', { token: gen1.pmc }), 400, {
      errors: { order_id: ['Unknown field'] },
    });
  });

  it('filters by the Gen1 id fields', async () => {
    const [object] = pmc.objects!;
    const flats = await getJson<{ data: Gen1Record[] }>(api, `/flats?object_id=${object}`, gen1.pmc);
    expect(flats.data.map((flat) => flat.id)).toEqual(pmc.flats);
    const [order] = pmc.orders!;
    const timeline = await getJson<{ data: Gen1Record[] }>(api, `/ordertimeline?order_id=${order}`, gen1.pmc);
    expect(timeline.data.map((entry) => entry.id)).toEqual(pmc.ordertimeline);
    // a filter naming another PMC's record finds nothing, rather than telling it exists
    const foreign = await getJson(api, `/flats?object_id=${other.objects![0]}`, gen1.pmc);
    expect(foreign).toMatchObject({ data: [], total: 0 });
  });

  it('answers the contact details of one company or user whole (a Gen2 rule bounds them)', async () => {
    const company = await getJson(api, `/companycontact?company_id=${world.pmc.id}`, gen1.pmc);
    expect(company).toEqual({ data: expect.any(Array), total: 2, paginated: false });
    const user = await getJson(api, `/usercontact?user_id=${world.pmc.full.id}`, gen1.pmc);
    expect(user).toEqual({
      data: [expect.objectContaining({ id: pmc.usercontact![0] })],
      total: 1,
      paginated: false,
    });
    await expectProblem(
      await api.fetch(`/companycontact?company_id=${world.pmc.id}&page=1`, { token: gen1.pmc }),
      400,
      { errors: { page: [expect.stringContaining('answered whole')] } },
    );
  });
});

describe('embedded entities', () => {
  it('an object carries its entrances and flats, in lists and single reads', async () => {
    const [object, empty] = pmc.objects!;
    const record = await getJson<Gen1Record>(api, `/objects/${object}`, gen1.pmc);
    const entrances = await Promise.all(
      pmc.entrances!.map(async (id) =>
        toGen1(entranceFields, await getJson(api, `/api/entrances/${id}`, world.pmc.full.token)),
      ),
    );
    const flats = await Promise.all(
      pmc.flats!.map(async (id) =>
        toGen1(flatsView.fields, await getJson(api, `/api/units/${id}`, world.pmc.full.token)),
      ),
    );
    expect(record.entrances).toEqual(entrances);
    expect(record.flats).toEqual(flats);
    const list = await getJson<{ data: Gen1Record[] }>(api, '/objects', gen1.pmc);
    expect(list.data.find((item) => item.id === object)).toEqual(record);
    expect(list.data.find((item) => item.id === empty)).toMatchObject({ entrances: [], flats: [] });
  });

  it('an order carries its timeline on the single read only', async () => {
    const [order] = pmc.orders!;
    const record = await getJson<Gen1Record>(api, `/orders/${order}`, gen1.pmc);
    const entries = await Promise.all(
      pmc.ordertimeline!.map(async (id) =>
        toGen1(orderTimelineView.fields, await getJson(api, `/api/process-feed/${id}`, world.pmc.full.token)),
      ),
    );
    expect(record.timeline).toEqual(entries);
    expect(record.timeline_total).toBe(3);
    const list = await getJson<{ data: Gen1Record[] }>(api, '/orders', gen1.pmc);
    expect(list.data.find((item) => item.id === order)).not.toHaveProperty('timeline');
  });

  it(`embeds the newest ${TIMELINE_EMBED_LIMIT} timeline entries of a longer timeline, and says how many there are`, async () => {
    const order = await create('/api/processes', world.pmc.full.token, { title: 'Lang' });
    const rows = Array.from({ length: TIMELINE_EMBED_LIMIT + 5 }, (_, i) => ({
      party_id: world.pmc.id,
      process_id: order,
      text: `entry ${i}`,
      author_account_id: world.pmc.full.id,
    }));
    await api.deps.knex('process_feed').insert(rows);
    const record = await getJson<{ timeline: { text: string }[]; timeline_total: number }>(
      api,
      `/orders/${order}`,
      gen1.pmc,
    );
    expect(record.timeline_total).toBe(TIMELINE_EMBED_LIMIT + 5);
    expect(record.timeline).toHaveLength(TIMELINE_EMBED_LIMIT);
    expect(record.timeline[0]!.text).toBe('entry 5');
    expect(record.timeline.at(-1)!.text).toBe(`entry ${TIMELINE_EMBED_LIMIT + 4}`);
  });

  it('embedding needs the Gen2 read permissions of what is embedded (403 otherwise)', async () => {
    const account = await buildAccount(api.deps, {
      partyId: world.pmc.id,
      permissions: ['Property.Read', 'Process.Read'],
    });
    const token = (await gen1Login(api, account.email)).access_token;
    await expectProblem(await api.fetch('/objects', { token }), 403, { detail: /Entrance\.Read/ });
    await expectProblem(await api.fetch(`/orders/${pmc.orders![0]}`, { token }), 403, {
      detail: /ProcessFeed\.Read/,
    });
    // a list of orders embeds nothing, so Process.Read is enough
    expect((await api.fetch('/orders', { token })).status).toBe(200);
    expect(permissionByName('ProcessFeed.Read')).toBeDefined();
  });
});

describe('the Gen2 rules of scope and access, unchanged', () => {
  it('a User (party type 7) sees only its own account among the users', async () => {
    const list = await getJson<{ data: Gen1Record[] }>(api, '/users', gen1.user);
    expect(list.data.map((record) => record.id)).toEqual([world.user.full.id]);
  });

  it('a contractor reads the work orders addressed to it, as in Gen2', async () => {
    const list = await getJson<{ data: Gen1Record[] }>(api, '/ordercontractor', gen1.contractor);
    expect(list.data.map((record) => record.id)).toEqual(pmc.ordercontractor);
    // but not the order (process) behind it, which belongs to the PMC
    await expectProblem(await api.fetch(`/orders/${pmc.orders![0]}`, { token: gen1.contractor }), 404);
  });

  it('an Admin sees every company', async () => {
    const list = await getJson<{ data: Gen1Record[] }>(api, '/companies?page_size=100', gen1.admin);
    expect(list.data.map((record) => record.id)).toEqual(
      expect.arrayContaining([...pmc.companies!, ...other.companies!, world.admin.id]),
    );
  });

  it('reads need the Gen2 read permission (403 without it)', async () => {
    const bare = (await gen1Login(api, world.pmc.bare.email)).access_token;
    await expectProblem(await api.fetch('/flats', { token: bare }), 403, { detail: /Unit\.Read/ });
    // accounts are readable without a permission, as in Gen2
    expect((await api.fetch('/users', { token: bare })).status).toBe(200);
  });
});

describe('views without a Gen2 resource (docs/gen1-to-gen2.md#not-covered-and-why)', () => {
  it('answer every verb with a 501 ProblemDetails naming the missing Gen2 resource', async () => {
    for (const [name, gen2] of Object.entries(UNSERVED_VIEWS)) {
      for (const [method, path] of [
        ['GET', `/${name}`],
        ['POST', `/${name}`],
        ['GET', `/${name}/1`],
        ['PUT', `/${name}/1`],
        ['PATCH', `/${name}/1`],
        ['DELETE', `/${name}/1`],
      ] as const) {
        const json = method === 'GET' || method === 'DELETE' ? undefined : {};
        const response = await api.fetch(path, { method, token: gen1.pmc, json });
        const problem = await expectProblem(response, 501);
        expect(problem.detail, `${method} ${path}`).toContain(`Gen2 resource ${gen2}`);
      }
    }
    expect(Object.keys(UNSERVED_VIEWS).sort()).toEqual([
      'measurements',
      'objectaccess',
      'projects',
      'properties',
      'todo',
    ]);
  });

  it('still need a Gen1 token (401 without one)', async () => {
    expect((await api.fetch('/projects')).status).toBe(401);
  });
});

describe('/companytype (Gen2 AccountRole)', () => {
  it('lists the party types of docs/api.md#party-types, whole, the same for every caller', async () => {
    const expected = {
      data: [
        { id: 1, name: 'Admin' },
        { id: 2, name: 'Property Management Company' },
        { id: 3, name: 'Pool Manager' },
        { id: 5, name: 'Contractor' },
        { id: 7, name: 'User' },
        { id: 13, name: 'Insurance Broker' },
        { id: 14, name: 'Insurer' },
      ],
      total: 7,
      paginated: false,
    };
    for (const token of [gen1.pmc, gen1.user, gen1.contractor]) {
      expect(await getJson(api, '/companytype', token)).toEqual(expected);
    }
    expect(expected.data.map((type) => type.id)).toEqual([...ALL_PARTY_TYPES]);
  });

  it('reads one by its value; an unknown one is a 404, a query a 400', async () => {
    expect(await getJson(api, '/companytype/5', gen1.user)).toEqual({ id: 5, name: 'Contractor' });
    await expectProblem(await api.fetch('/companytype/4', { token: gen1.user }), 404, {
      detail: 'company type 4 was not found',
    });
    await expectProblem(await api.fetch('/companytype?page=2', { token: gen1.user }), 400);
  });
});

describe('api-version (it selects Gen2 versions only: docs/gen1-to-gen2.md#semantic-traps)', () => {
  it('is ignored by Gen1 routes: any value, even one Gen2 refuses, answers as without it', async () => {
    const plain = await getJson(api, '/flats', gen1.pmc);
    for (const version of ['1', '1.0', '2', '2.0', '3', 'nonsense']) {
      const response = await api.fetch('/flats', { token: gen1.pmc, headers: { 'api-version': version } });
      expect(response.status, version).toBe(200);
      expect(await response.json()).toEqual(plain);
      // nor does Gen1 advertise the Gen2 versions
      expect(response.headers.get('api-supported-versions')).toBeNull();
    }
    // Gen2 does not ignore it, so the header above did reach the API
    const gen2 = await api.fetch('/api/units', {
      token: world.pmc.full.token,
      headers: { 'api-version': '3' },
    });
    expect(gen2.status).toBe(400);
  });
});

it('serves every view of the docs/gen1-to-gen2.md table that has Gen2 data, each filter on a Gen2 collection field', () => {
  expect(GEN1_VIEWS.map((view) => view.name).sort()).toEqual(Object.keys(GEN2_PATHS).sort());
  for (const view of GEN1_VIEWS) {
    for (const filter of view.filters ?? []) {
      expect(view.source.collection.fields[view.fields[filter]!], `${view.name}?${filter}`).toBeDefined();
    }
  }
});

it('filters every view by each of its id filters', async () => {
  for (const view of GEN1_VIEWS) {
    for (const filter of view.filters ?? []) {
      const response = await api.fetch(`/${view.name}?${filter}=1`, { token: gen1.admin });
      expect(response.status, `${view.name}?${filter}`).toBe(200);
    }
  }
});
