import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, writableCounts, expectFieldErrors } from '../../tests/support/http';
import { buildParty, useTestApi } from '../../tests/support/api';
import {
  buildProperty,
  buildUnit,
  postOk,
  expectCaptureContract,
  expectNothingCaptured,
  expectOutOfScope,
  expectRolledBack,
  expectRegistryAccessRules,
  idsOf,
  patchOk,
  resetCapture,
  expectDeleted,
} from '../../tests/support/resources';

const { api, world } = useTestApi({ world: true });
let property: number;
let unit: number;
let otherUnit: number;
/** A second contractor of `pmc`, to prove a contractor sees only what is addressed to it. */
let secondContractor: number;
/** A contractor managed by `otherPmc`: outside `pmc`'s scope. */
let foreignContractor: number;

type WorkOrder = Record<string, unknown> & { id: number };

const workOrder = (overrides: Record<string, unknown> = {}) => ({
  contractorPartyId: world.contractor.id,
  title: 'Replace boiler',
  ...overrides,
});
const createWorkOrder = (token: string, body: Record<string, unknown> = workOrder()) =>
  postOk<WorkOrder>(api, '/api/work-orders', token, body);

beforeAll(async () => {
  property = await buildProperty(api, world.pmc.id);
  unit = await buildUnit(api, world.pmc.id, property);
  otherUnit = await buildUnit(api, world.pmc.id, await buildProperty(api, world.pmc.id));
  secondContractor = (await buildParty(api.deps, { type: 5, managedByPartyId: world.pmc.id })).id;
  foreignContractor = (await buildParty(api.deps, { type: 5, managedByPartyId: world.otherPmc.id })).id;
});
beforeEach(() => resetCapture(api));

describe('WorkOrder', () => {
  it('creates, reads, lists, searches, updates and deletes', async () => {
    const token = world.pmc.full.token;
    const process = await postOk(api, '/api/processes', token, { title: 'Cold water' });
    const created = await createWorkOrder(
      token,
      workOrder({
        processId: process.id,
        propertyId: property,
        unitId: unit,
        scheduledFor: '2026-12-01T09:30:00+01:00',
        cost: 1234.5,
      }),
    );
    expect(created).toEqual({
      id: expect.any(Number),
      created: expect.any(String),
      lastModified: null,
      deleted: null,
      partyId: world.pmc.id,
      processId: process.id,
      contractorPartyId: world.contractor.id,
      propertyId: property,
      unitId: unit,
      title: 'Replace boiler',
      description: null,
      status: 'requested',
      scheduledFor: '2026-12-01T08:30:00.000Z',
      completedAt: null,
      cost: 1234.5,
      currency: 'EUR',
    });
    expect(await (await api.fetch(`/api/work-orders/${created.id}`, { token })).json()).toEqual(created);
    expect(
      await idsOf(
        await api.fetch('/api/work-orders?SortByAttributeName=cost&AscendingOrder=false', { token }),
      ),
    ).toContain(created.id);
    const search = await api.fetch('/api/work-orders/search', {
      method: 'POST',
      token,
      json: {
        filters: [
          { attribute: 'cost', operator: 'gte', value: 1234.5 },
          { attribute: 'processId', operator: 'eq', value: process.id },
        ],
      },
    });
    expect(await idsOf(search)).toEqual([created.id]);

    const before = api.clock.now().toISOString();
    const patched = await patchOk<WorkOrder>(api, `/api/work-orders/${created.id}`, token, {
      status: 'completed',
      cost: 99.99,
      currency: 'CHF',
      description: 'Done on site',
    });
    expect(patched).toMatchObject({
      status: 'completed',
      completedAt: before,
      cost: 99.99,
      currency: 'CHF',
      description: 'Done on site',
    });
    const reopened = await patchOk<WorkOrder>(api, `/api/work-orders/${created.id}`, token, {
      status: 'scheduled',
      cost: null,
    });
    expect(reopened).toMatchObject({ status: 'scheduled', completedAt: null, cost: null });

    await expectDeleted(api, `/api/work-orders/${created.id}`, token);
  });

  it('applies the access rules of every operation', async () => {
    await expectRegistryAccessRules(api, world, '/api/work-orders', 'WorkOrder', {
      body: workOrder(),
      patch: { status: 'accepted' },
    });
  });

  it('lets the contractor read the work orders addressed to it, and nothing else', async () => {
    const token = world.pmc.full.token;
    const mine = await createWorkOrder(token);
    const someoneElses = await createWorkOrder(token, workOrder({ contractorPartyId: secondContractor }));
    const contractor = world.contractor.full.token;
    expect(await (await api.fetch(`/api/work-orders/${mine.id}`, { token: contractor })).json()).toEqual(
      mine,
    );
    expect((await api.fetch(`/api/work-orders/${someoneElses.id}`, { token: contractor })).status).toBe(404);
    const listed = await idsOf(await api.fetch('/api/work-orders?PageSize=100', { token: contractor }));
    expect(listed).toContain(mine.id);
    expect(listed).not.toContain(someoneElses.id);
    const searched = await idsOf(
      await api.fetch('/api/work-orders/search', {
        method: 'POST',
        token: contractor,
        json: { filters: [{ attribute: 'id', operator: 'in', value: [mine.id, someoneElses.id] }] },
      }),
    );
    expect(searched).toEqual([mine.id]);
    const batch = await api.fetch('/api/work-orders/batch', {
      method: 'POST',
      token: contractor,
      json: { ids: [someoneElses.id, mine.id] },
    });
    expect(await idsOf(batch)).toEqual([mine.id]);
    // the tenant the PMC manages sees neither
    expect((await api.fetch(`/api/work-orders/${mine.id}`, { token: world.user.full.token })).status).toBe(
      404,
    );
  });

  it('makes a row readable, never writable, through the contractor column', async () => {
    // owned by otherPmc, addressed to pmc's contractor: pmc sees it through its contractor only
    const crossed = await createWorkOrder(
      world.admin.full.token,
      workOrder({ partyId: world.otherPmc.id, contractorPartyId: world.contractor.id }),
    );
    const token = world.pmc.full.token;
    expect((await api.fetch(`/api/work-orders/${crossed.id}`, { token })).status).toBe(200);
    await expectProblem(
      await api.fetch(`/api/work-orders/${crossed.id}`, { method: 'PATCH', token, json: { title: 'Mine' } }),
      404,
    );
    await expectProblem(await api.fetch(`/api/work-orders/${crossed.id}`, { method: 'DELETE', token }), 404);
    expect(
      (await api.fetch(`/api/work-orders/${crossed.id}`, { token: world.otherPmc.full.token })).status,
    ).toBe(200);
  });

  it('scopes reads, writes and relations to the caller’s parties', async () => {
    const token = world.pmc.full.token;
    const foreign = await createWorkOrder(
      world.otherPmc.full.token,
      workOrder({ contractorPartyId: foreignContractor }),
    );
    await expectOutOfScope(api, '/api/work-orders', token, foreign.id, { patch: { title: 'X' } });
    const foreignProcess = await postOk(api, '/api/processes', world.otherPmc.full.token, {
      title: 'X',
    });
    for (const [body, field, message] of [
      [
        workOrder({ contractorPartyId: foreignContractor }),
        'contractorPartyId',
        `Contractor ${foreignContractor} does not exist`,
      ],
      [
        workOrder({ contractorPartyId: world.user.id }),
        'contractorPartyId',
        `Party ${world.user.id} is not a contractor (party type 5)`,
      ],
      [
        workOrder({ processId: foreignProcess.id }),
        'processId',
        `Process ${foreignProcess.id} does not exist`,
      ],
      [
        workOrder({ propertyId: property, unitId: otherUnit }),
        'unitId',
        `Unit ${otherUnit} is not a unit of property ${property}`,
      ],
    ] as const) {
      await expectProblem(await api.fetch('/api/work-orders', { method: 'POST', token, json: body }), 400, {
        errors: { [field]: [message] },
      });
    }
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const before = await writableCounts(api);
    const token = world.pmc.full.token;
    await expectNothingCaptured(api, world, 'WorkOrder', 'work_orders', async () => {
      await expectFieldErrors(api, 'POST', '/api/work-orders', token, [
        [workOrder({ title: ' ' }), 'title'],
        [workOrder({ status: 'done' }), 'status'],
        [workOrder({ cost: -1 }), 'cost'],
        [workOrder({ cost: 1.234 }), 'cost'],
        [workOrder({ cost: '12' }), 'cost'],
        [workOrder({ currency: 'eur' }), 'currency'],
        [workOrder({ scheduledFor: '2026-12-01' }), 'scheduledFor'],
        [workOrder({ completedAt: '2026-12-01T00:00:00Z' }), 'completedAt'],
        [{ title: 'No contractor' }, 'contractorPartyId'],
      ]);
    });
    expect(await writableCounts(api)).toEqual(before);
  });

  it('captures every write with its read shape, for the writer’s subscribed registrations only', async () => {
    await expectCaptureContract(api, world, {
      entityName: 'WorkOrder',
      path: '/api/work-orders',
      body: workOrder({ cost: 10 }),
      patch: { status: 'accepted' },
    });
  });

  it('refuses a bad patch with a 400 naming the field and writes nothing', async () => {
    const token = world.pmc.full.token;
    const existing = await createWorkOrder(token);
    const before = await writableCounts(api);
    const rows = await api.db.knex('work_orders').orderBy('id').select('*');
    await expectNothingCaptured(api, world, 'WorkOrder', 'work_orders', async () => {
      await expectFieldErrors(api, 'PATCH', `/api/work-orders/${existing.id}`, token, [
        [{ title: null }, 'title'],
        [{ status: 'done' }, 'status'],
        [{ cost: -1 }, 'cost'],
        [{ contractorPartyId: null }, 'contractorPartyId'],
        [{ completedAt: '2026-12-01T00:00:00Z' }, 'completedAt'],
        [{ partyId: world.user.id }, 'partyId'],
      ]);
    });
    expect(await api.db.knex('work_orders').orderBy('id').select('*')).toEqual(rows);
    expect(await writableCounts(api)).toEqual(before);
  });

  it('rolls back a write that fails at commit: no work order change, no entity change, no webhook', async () => {
    const token = world.pmc.full.token;
    const existing = await createWorkOrder(token);
    await expectRolledBack(api, {
      partyId: world.pmc.id,
      entityName: 'WorkOrder',
      table: 'work_orders',
      writes: [
        () => api.fetch('/api/work-orders', { method: 'POST', token, json: workOrder() }),
        () =>
          api.fetch(`/api/work-orders/${existing.id}`, {
            method: 'PATCH',
            token,
            json: { status: 'accepted' },
          }),
        () => api.fetch(`/api/work-orders/${existing.id}`, { method: 'DELETE', token }),
      ],
    });
  });
});
