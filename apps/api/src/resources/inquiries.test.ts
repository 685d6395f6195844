import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SPEC_INQUIRY_FIELDS } from '@platform/testkit';
import { expectProblem, writableCounts } from '../../tests/support/http';
import { useTestApi } from '../../tests/support/api';
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
  subscribe,
  expectReadListedFound,
  expectDeleted,
} from '../../tests/support/resources';

const { api, world } = useTestApi({ world: true });
let property: number;
let unit: number;
let otherUnit: number;

type Inquiry = Record<string, unknown> & { id: number };

// deliberately hostile: the API stores HTML as given, clients render it as untrusted
const REPORT = '<p>The heating is <b>off</b><script>alert(1)</script></p>';

const inquiry = (overrides: Record<string, unknown> = {}) => ({
  connectedPartyId: world.user.id,
  report: REPORT,
  ...overrides,
});
const createInquiry = (token: string, body: Record<string, unknown> = inquiry()) =>
  postOk<Inquiry>(api, '/api/inquiries', token, body);

beforeAll(async () => {
  property = await buildProperty(api, world.pmc.id);
  unit = await buildUnit(api, world.pmc.id, property);
  otherUnit = await buildUnit(api, world.pmc.id, await buildProperty(api, world.pmc.id));
});
beforeEach(() => resetCapture(api));

describe('Inquiry', () => {
  it('creates, reads, lists, searches, updates and deletes; the creator comes from the caller', async () => {
    const token = world.pmc.full.token;
    const process = await postOk(api, '/api/processes', token, { title: 'Heating' });
    const entry = await postOk(api, '/api/process-feed', token, {
      processId: process.id,
      text: 'Noted',
    });
    // every field a create may set, each answered as given
    const given = {
      sourceId: 3,
      categoryId: 2,
      subject: 'Heating',
      connectedPropertyId: property,
      connectedUnitId: unit,
      associatedProcessId: process.id,
      associatedProcessFeedEntryId: entry.id,
      associatedTodoId: 77,
      priority: 4,
      dueDate: '2026-12-24',
    };
    const created = await createInquiry(token, inquiry(given));
    expect(created).toEqual({
      ...given,
      id: expect.any(Number),
      connectedPartyId: world.user.id,
      creatorAccountId: world.pmc.full.id,
      creatorAccountRole: 2,
      receiverPartyId: world.pmc.id,
      readStatus: 0,
      report: REPORT,
      rejectionResponse: null,
      completionResponse: null,
      readByAccountId: null,
      created: expect.any(String),
      lastModified: null,
      deleted: null,
    });
    await expectReadListedFound(api, '/api/inquiries', token, created, 'dueDate', [
      { attribute: 'readStatus', operator: 'eq', value: 0 },
      { attribute: 'categoryId', operator: 'eq', value: 2 },
      { attribute: 'subject', operator: 'startsWith', value: 'heat' },
    ]);

    const patched = await patchOk(api, `/api/inquiries/${created.id}`, token, {
      completionResponse: 'Fixed',
      subject: null,
    });
    expect(patched).toMatchObject({
      completionResponse: 'Fixed',
      subject: null,
      creatorAccountId: world.pmc.full.id,
    });

    await expectDeleted(api, `/api/inquiries/${created.id}`, token);
  });

  it('records readByAccountId as the caller who marks it read, and clears it when unread again', async () => {
    const created = await createInquiry(world.pmc.full.token);
    const marked = await patchOk(api, `/api/inquiries/${created.id}`, world.admin.full.token, {
      readStatus: 1,
    });
    expect(marked).toMatchObject({ readStatus: 1, readByAccountId: world.admin.full.id });
    // marking it read again keeps the first reader
    const again = await patchOk(api, `/api/inquiries/${created.id}`, world.pmc.full.token, {
      readStatus: 1,
    });
    expect(again).toMatchObject({ readStatus: 1, readByAccountId: world.admin.full.id });
    const unread = await patchOk(api, `/api/inquiries/${created.id}`, world.pmc.full.token, {
      readStatus: 0,
    });
    expect(unread).toMatchObject({ readStatus: 0, readByAccountId: null });
    await expectProblem(
      await api.fetch(`/api/inquiries/${created.id}`, {
        method: 'PATCH',
        token: world.pmc.full.token,
        json: { readByAccountId: world.pmc.full.id },
      }),
      400,
      { errors: { readByAccountId: ['Unknown field'] } },
    );
  });

  it('captures an entity of exactly the Inquiry fields (the body a webhook carries)', async () => {
    await subscribe(api, world.pmc.id, 'Inquiry');
    const created = await createInquiry(world.pmc.full.token);
    const [change] = await api.db.knex('entity_changes').select('entity', 'entity_name');
    expect(change.entity_name).toBe('Inquiry');
    expect(Object.keys(change.entity).sort()).toEqual([...SPEC_INQUIRY_FIELDS].sort());
    expect(change.entity).toEqual(created);
    // the read shape of the API is the same key set: no partyId (the receiver owns it)
    expect(Object.keys(created).sort()).toEqual([...SPEC_INQUIRY_FIELDS].sort());
  });

  it('applies the access rules of every operation', async () => {
    await expectRegistryAccessRules(api, world, '/api/inquiries', 'Inquiry', {
      body: () => inquiry(),
      patch: { readStatus: 1 },
      inScope: () => inquiry({ receiverPartyId: world.pmc.id }),
    });
  });

  it('belongs to its receiver: scoping follows receiverPartyId', async () => {
    const token = world.pmc.full.token;
    // addressed to the tenant the PMC manages: both see it
    const toTenant = await createInquiry(token, inquiry({ receiverPartyId: world.user.id }));
    expect(toTenant).toMatchObject({ receiverPartyId: world.user.id, creatorAccountId: world.pmc.full.id });
    expect((await api.fetch(`/api/inquiries/${toTenant.id}`, { token: world.user.full.token })).status).toBe(
      200,
    );
    const toPmc = await createInquiry(token);
    expect((await api.fetch(`/api/inquiries/${toPmc.id}`, { token: world.user.full.token })).status).toBe(
      404,
    );

    const foreign = await createInquiry(
      world.otherPmc.full.token,
      inquiry({ connectedPartyId: world.otherUser.id }),
    );
    await expectOutOfScope(api, '/api/inquiries', token, foreign.id, {
      patch: { readStatus: 1 },
      visible: [toPmc.id, toTenant.id],
    });
    const receivers = await idsOf(
      await api.fetch('/api/inquiries/search', {
        method: 'POST',
        token,
        json: { filters: [{ attribute: 'receiverPartyId', operator: 'eq', value: world.user.id }] },
      }),
    );
    expect(receivers).toEqual([toTenant.id]);

    for (const [field, party] of [
      ['receiverPartyId', world.otherPmc.id],
      ['connectedPartyId', world.otherUser.id],
    ] as const) {
      await expectProblem(
        await api.fetch('/api/inquiries', { method: 'POST', token, json: inquiry({ [field]: party }) }),
        400,
        { errors: { [field]: [`Party ${party} does not exist`] } },
      );
    }
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const before = await writableCounts(api);
    const token = world.pmc.full.token;
    const existing = await createInquiry(token);
    const process = await postOk(api, '/api/processes', token, { title: 'One' });
    const otherProcess = await postOk(api, '/api/processes', token, { title: 'Two' });
    const entry = await postOk(api, '/api/process-feed', token, {
      processId: otherProcess.id,
      text: 'x',
    });
    await expectNothingCaptured(api, world, 'Inquiry', 'inquiries', async () => {
      for (const [body, field] of [
        [inquiry({ report: '' }), 'report'],
        [inquiry({ sourceId: 99 }), 'sourceId'],
        [inquiry({ categoryId: 0 }), 'categoryId'],
        [inquiry({ readStatus: 2 }), 'readStatus'],
        [inquiry({ priority: 7 }), 'priority'],
        [inquiry({ dueDate: '24.12.2026' }), 'dueDate'],
        [inquiry({ creatorAccountId: world.pmc.bare.id }), 'creatorAccountId'],
        [inquiry({ creatorAccountRole: 1 }), 'creatorAccountRole'],
        [inquiry({ partyId: world.pmc.id }), 'partyId'],
        [{ report: REPORT }, 'connectedPartyId'],
        [inquiry({ connectedPropertyId: property, connectedUnitId: otherUnit }), 'connectedUnitId'],
        [
          inquiry({ associatedProcessId: process.id, associatedProcessFeedEntryId: entry.id }),
          'associatedProcessFeedEntryId',
        ],
        [inquiry({ rejectionResponse: 'No', completionResponse: 'Yes' }), 'completionResponse'],
      ] as const) {
        const problem = await expectProblem(
          await api.fetch('/api/inquiries', { method: 'POST', token, json: body }),
          400,
        );
        expect(Object.keys(problem.errors ?? {}), JSON.stringify(body)).toEqual([field]);
      }
      // an inquiry stays in the inbox it was sent to
      await expectProblem(
        await api.fetch(`/api/inquiries/${existing.id}`, {
          method: 'PATCH',
          token,
          json: { receiverPartyId: world.user.id },
        }),
        400,
        { errors: { receiverPartyId: ['Unknown field'] } },
      );
    });
    expect(await writableCounts(api)).toEqual(before);
  });

  it('captures every write with its read shape, for the writer’s subscribed registrations only', async () => {
    await expectCaptureContract(api, world, {
      entityName: 'Inquiry',
      path: '/api/inquiries',
      body: inquiry(),
      patch: { readStatus: 1 },
    });
  });

  it('rolls back a write that fails at commit: no inquiry change, no entity change, no webhook', async () => {
    const token = world.pmc.full.token;
    const existing = await createInquiry(token);
    await expectRolledBack(api, {
      partyId: world.pmc.id,
      entityName: 'Inquiry',
      table: 'inquiries',
      writes: [
        () => api.fetch('/api/inquiries', { method: 'POST', token, json: inquiry() }),
        () => api.fetch(`/api/inquiries/${existing.id}`, { method: 'PATCH', token, json: { readStatus: 1 } }),
        () => api.fetch(`/api/inquiries/${existing.id}`, { method: 'DELETE', token }),
      ],
    });
  });
});
