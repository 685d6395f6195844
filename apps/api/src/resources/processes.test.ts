import { WebhookState } from '@platform/shared';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem, writableCounts, expectFieldErrors } from '../../tests/support/http';
import { buildAccount, buildParty, login, useTestApi } from '../../tests/support/api';
import {
  buildProperty,
  buildUnit,
  countRows,
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
let otherProperty: number;
let otherUnit: number;

type Process = Record<string, unknown> & { id: number };

const process = (overrides: Record<string, unknown> = {}) => ({ title: 'Leaking tap', ...overrides });
const createProcess = (token: string, body: Record<string, unknown> = process()) =>
  postOk<Process>(api, '/api/processes', token, body);

beforeAll(async () => {
  property = await buildProperty(api, world.pmc.id);
  unit = await buildUnit(api, world.pmc.id, property);
  otherProperty = await buildProperty(api, world.pmc.id);
  otherUnit = await buildUnit(api, world.pmc.id, otherProperty);
});
beforeEach(() => resetCapture(api));

describe('Process', () => {
  it('creates, reads, lists, searches, updates and deletes', async () => {
    const token = world.pmc.full.token;
    const created = await createProcess(
      token,
      process({ propertyId: property, unitId: unit, priority: 3, dueDate: '2026-03-31' }),
    );
    expect(created).toEqual({
      id: expect.any(Number),
      created: expect.any(String),
      lastModified: null,
      deleted: null,
      partyId: world.pmc.id,
      title: 'Leaking tap',
      description: null,
      status: 'open',
      priority: 3,
      propertyId: property,
      unitId: unit,
      assigneeAccountId: null,
      dueDate: '2026-03-31',
      completedAt: null,
    });
    await expectReadListedFound(api, '/api/processes', token, created, 'dueDate', [
      { attribute: 'dueDate', operator: 'lte', value: '2026-03-31' },
      { attribute: 'priority', operator: 'eq', value: 3 },
      { attribute: 'title', operator: 'contains', value: 'TAP' },
    ]);

    const patched = await patchOk(api, `/api/processes/${created.id}`, token, {
      description: 'Kitchen',
      dueDate: null,
      assigneeAccountId: world.pmc.bare.id,
    });
    expect(patched).toMatchObject({
      description: 'Kitchen',
      dueDate: null,
      assigneeAccountId: world.pmc.bare.id,
    });

    await expectDeleted(api, `/api/processes/${created.id}`, token);
  });

  it('sets completedAt when the status becomes completed and clears it when it leaves', async () => {
    const token = world.pmc.full.token;
    const start = api.clock.now();
    const created = await createProcess(token, process({ status: 'completed' }));
    expect(created.completedAt).toBe(start.toISOString());
    api.clock.advance(60_000);
    // staying completed keeps the first completion time
    const kept = await patchOk<Process>(api, `/api/processes/${created.id}`, token, {
      status: 'completed',
      title: 'Still done',
    });
    expect(kept.completedAt).toBe(start.toISOString());
    const reopened = await patchOk<Process>(api, `/api/processes/${created.id}`, token, {
      status: 'in_progress',
    });
    expect(reopened.completedAt).toBeNull();
    api.clock.advance(60_000);
    const done = await patchOk<Process>(api, `/api/processes/${created.id}`, token, {
      status: 'completed',
    });
    expect(done.completedAt).toBe(new Date(start.getTime() + 120_000).toISOString());
    // a client cannot write it
    await expectProblem(
      await api.fetch(`/api/processes/${created.id}`, {
        method: 'PATCH',
        token,
        json: { completedAt: '2020-01-01T00:00:00Z' },
      }),
      400,
      { errors: { completedAt: ['Unknown field'] } },
    );
  });

  it('applies the access rules of every operation', async () => {
    await expectRegistryAccessRules(api, world, '/api/processes', 'Process', {
      body: process(),
      patch: { priority: 4 },
    });
  });

  it('scopes reads, writes and relations to the caller’s parties (out of scope = 404 or a 400 naming the field)', async () => {
    const token = world.pmc.full.token;
    const foreign = await createProcess(world.otherPmc.full.token);
    const managed = await createProcess(world.admin.full.token, process({ partyId: world.user.id }));
    expect((await api.fetch(`/api/processes/${managed.id}`, { token })).status).toBe(200);
    // the managed tenant sees its own process, not its manager's
    const own = await createProcess(token);
    expect((await api.fetch(`/api/processes/${managed.id}`, { token: world.user.full.token })).status).toBe(
      200,
    );
    expect((await api.fetch(`/api/processes/${own.id}`, { token: world.user.full.token })).status).toBe(404);
    await expectOutOfScope(api, '/api/processes', token, foreign.id, {
      patch: { title: 'X' },
      visible: [managed.id],
    });

    const foreignProperty = await buildProperty(api, world.otherPmc.id);
    for (const [body, field] of [
      [process({ partyId: world.otherPmc.id }), 'partyId'],
      [process({ propertyId: foreignProperty }), 'propertyId'],
      [process({ assigneeAccountId: world.otherPmc.full.id }), 'assigneeAccountId'],
      [process({ propertyId: property, unitId: otherUnit }), 'unitId'],
    ] as const) {
      const problem = await expectProblem(
        await api.fetch('/api/processes', { method: 'POST', token, json: body }),
        400,
      );
      expect(Object.keys(problem.errors ?? {}), JSON.stringify(body)).toEqual([field]);
    }
    // the unit rule holds for a patch of either side against the other's stored value
    const placed = await createProcess(token, process({ propertyId: property, unitId: unit }));
    await expectProblem(
      await api.fetch(`/api/processes/${placed.id}`, {
        method: 'PATCH',
        token,
        json: { propertyId: otherProperty },
      }),
      400,
      { errors: { unitId: [`Unit ${unit} is not a unit of property ${otherProperty}`] } },
    );
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const before = await writableCounts(api);
    const token = world.pmc.full.token;
    await expectNothingCaptured(api, world, 'Process', 'processes', async () => {
      await expectFieldErrors(api, 'POST', '/api/processes', token, [
        [process({ title: '' }), 'title'],
        [process({ title: 'x'.repeat(201) }), 'title'],
        [process({ status: 'done' }), 'status'],
        [process({ priority: 5 }), 'priority'],
        [process({ dueDate: '2026-02-30' }), 'dueDate'],
        [process({ propertyId: 0 }), 'propertyId'],
        [process({ completedAt: '2026-01-01T00:00:00Z' }), 'completedAt'],
        [{ description: 'no title' }, 'title'],
      ]);
    });
    expect(await writableCounts(api)).toEqual(before);
  });

  it('captures every write with its read shape, for the writer’s subscribed registrations only', async () => {
    await expectCaptureContract(api, world, {
      entityName: 'Process',
      path: '/api/processes',
      body: process({ propertyId: property }),
      patch: { status: 'on_hold' },
    });
  });

  it('records nothing for a write rolled back at commit, an empty patch or another party’s write', async () => {
    await subscribe(api, world.pmc.id, 'Process');
    // a deferred trigger fails the transaction at commit, after the change was captured
    await api.db.knex.raw(`
      create function fail_marked_process() returns trigger language plpgsql as $$
      begin
        if new.title = 'roll me back' then raise exception 'refused at commit'; end if;
        return null;
      end $$;
      create constraint trigger fail_marked_process after insert or update on processes
        deferrable initially deferred for each row execute function fail_marked_process();
    `);
    try {
      const token = world.pmc.full.token;
      const processes = await countRows(api, 'processes');
      const response = await api.fetch('/api/processes', {
        method: 'POST',
        token,
        json: process({ title: 'roll me back' }),
      });
      expect(response.status).toBe(500);
      const kept = await createProcess(token);
      const refused = await api.fetch(`/api/processes/${kept.id}`, {
        method: 'PATCH',
        token,
        json: { title: 'roll me back' },
      });
      expect(refused.status).toBe(500);
      expect(await countRows(api, 'processes')).toBe(processes + 1);
      const stored = (await (await api.fetch(`/api/processes/${kept.id}`, { token })).json()) as Process;
      expect(stored.title).toBe('Leaking tap');
      await patchOk(api, `/api/processes/${kept.id}`, token, {});
      const foreign = await createProcess(world.otherPmc.full.token);
      // the committed creates were captured; only the writer's party's one reaches its registration
      const changes = await api.db.knex('entity_changes').orderBy('id').select('id', 'entity_id', 'type');
      expect(changes.map((c) => [c.entity_id, c.type])).toEqual([
        [kept.id, 1],
        [foreign.id, 1],
      ]);
      expect(await api.db.knex('webhooks').pluck('entity_change_id')).toEqual([changes[0]!.id]);
    } finally {
      await api.db.knex.raw(
        'drop trigger fail_marked_process on processes; drop function fail_marked_process()',
      );
    }
  });

  it('chains the changes of one process for a grouped registration', async () => {
    const grouped = await subscribe(api, world.pmc.id, 'Process', [1, 2, 3], true);
    const token = world.pmc.full.token;
    const created = await createProcess(token);
    await patchOk(api, `/api/processes/${created.id}`, token, { status: 'in_progress' });
    await api.fetch(`/api/processes/${created.id}`, { method: 'DELETE', token });
    const webhooks = await api.db.knex('webhooks').where({ registration_id: grouped }).orderBy('id');
    expect(webhooks.map((w) => [w.state, w.group_key, w.group_seq])).toEqual([
      [WebhookState.Created, `Process:${created.id}`, 1],
      [WebhookState.Pending, `Process:${created.id}`, 2],
      [WebhookState.Pending, `Process:${created.id}`, 3],
    ]);
  });

  it('counts the party’s live processes in the access token’s telemetry claim', async () => {
    const party = await buildParty(api.deps, { type: 2 });
    const account = await buildAccount(api.deps, { partyId: party.id });
    const telemetry = async () => {
      const { accessToken } = await login(api, account.email);
      const claims = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as {
        telemetry: string;
      };
      return JSON.parse(claims.telemetry) as { UnitCount: number; ProcessCount: number };
    };
    expect((await telemetry()).ProcessCount).toBe(0);
    const { accessToken } = await login(api, account.email);
    const first = await createProcess(accessToken);
    await createProcess(accessToken);
    await createProcess(accessToken);
    await api.fetch(`/api/processes/${first.id}`, { method: 'DELETE', token: accessToken });
    // another party's process does not count
    await createProcess(world.pmc.full.token);
    expect((await telemetry()).ProcessCount).toBe(2);
  });
});

describe('ProcessFeed', () => {
  const feedEntry = (processId: number, overrides: Record<string, unknown> = {}) => ({
    processId,
    text: 'Called the plumber',
    ...overrides,
  });

  it('creates, reads, lists, searches and updates; the author is the caller; there is no delete', async () => {
    const token = world.pmc.full.token;
    const parent = await createProcess(token);
    const created = await postOk(api, '/api/process-feed', token, feedEntry(parent.id));
    expect(created).toEqual({
      id: expect.any(Number),
      created: expect.any(String),
      lastModified: null,
      deleted: null,
      partyId: world.pmc.id,
      processId: parent.id,
      kind: 'comment',
      text: 'Called the plumber',
      authorAccountId: world.pmc.full.id,
    });
    expect(await (await api.fetch(`/api/process-feed/${created.id}`, { token })).json()).toEqual(created);
    expect(
      await idsOf(await api.fetch('/api/process-feed?SortByAttributeName=created', { token })),
    ).toContain(created.id);
    const search = await api.fetch('/api/process-feed/search', {
      method: 'POST',
      token,
      json: { filters: [{ attribute: 'processId', operator: 'eq', value: parent.id }] },
    });
    expect(await idsOf(search)).toEqual([created.id]);
    // another account of the party edits it: the author stays who wrote it
    const patched = await patchOk(api, `/api/process-feed/${created.id}`, world.pmc.full.token, {
      kind: 'message',
      text: 'Plumber comes Monday',
    });
    expect(patched).toMatchObject({
      kind: 'message',
      text: 'Plumber comes Monday',
      authorAccountId: world.pmc.full.id,
    });

    const deleted = await api.fetch(`/api/process-feed/${created.id}`, { method: 'DELETE', token });
    expect(deleted.status).toBe(405);
    expect(deleted.headers.get('allow')).not.toContain('DELETE');
    expect((await api.fetch(`/api/process-feed/${created.id}`, { token })).status).toBe(200);
  });

  it('belongs to the party of its process, so whoever sees the process sees its timeline', async () => {
    const tenantProcess = await createProcess(world.pmc.full.token, process({ partyId: world.user.id }));
    const entry = await postOk(api, '/api/process-feed', world.pmc.full.token, feedEntry(tenantProcess.id));
    expect(entry).toMatchObject({ partyId: world.user.id, authorAccountId: world.pmc.full.id });
    expect((await api.fetch(`/api/process-feed/${entry.id}`, { token: world.user.full.token })).status).toBe(
      200,
    );
  });

  it('applies the access rules of every operation', async () => {
    const parent = await createProcess(world.admin.full.token, process({ partyId: world.pmc.id }));
    await expectRegistryAccessRules(api, world, '/api/process-feed', 'ProcessFeed', {
      body: feedEntry(parent.id),
      patch: { text: 'Edited' },
      inScope: () => feedEntry(parent.id),
      deletable: false,
    });
  });

  it('scopes reads and writes to the caller’s parties', async () => {
    const token = world.pmc.full.token;
    const foreignProcess = await createProcess(world.otherPmc.full.token);
    const foreign = await postOk(
      api,
      '/api/process-feed',
      world.otherPmc.full.token,
      feedEntry(foreignProcess.id),
    );
    await expectOutOfScope(api, '/api/process-feed', token, foreign.id, {
      patch: { text: 'X' },
      deletable: false,
    });
    // an entry for a process the caller cannot see is refused, naming processId
    await expectProblem(
      await api.fetch('/api/process-feed', { method: 'POST', token, json: feedEntry(foreignProcess.id) }),
      400,
      { errors: { processId: [`Process ${foreignProcess.id} does not exist`] } },
    );
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const token = world.pmc.full.token;
    const parent = await createProcess(token);
    const entry = await postOk(api, '/api/process-feed', token, feedEntry(parent.id));
    const other = await createProcess(token);
    await expectNothingCaptured(api, world, 'ProcessFeed', 'process_feed', async () => {
      await expectFieldErrors(api, 'POST', '/api/process-feed', token, [
        [feedEntry(parent.id, { text: '' }), 'text'],
        [feedEntry(parent.id, { kind: 'note' }), 'kind'],
        [feedEntry(parent.id, { authorAccountId: world.pmc.bare.id }), 'authorAccountId'],
        [feedEntry(parent.id, { partyId: world.pmc.id }), 'partyId'],
        [{ text: 'orphan' }, 'processId'],
      ]);
      // an entry stays on its process
      await expectProblem(
        await api.fetch(`/api/process-feed/${entry.id}`, {
          method: 'PATCH',
          token,
          json: { processId: other.id },
        }),
        400,
        { errors: { processId: ['Unknown field'] } },
      );
    });
  });

  it('captures creates and updates with their read shape, for the writer’s subscribed registrations only', async () => {
    const parent = await createProcess(world.pmc.full.token);
    await resetCapture(api);
    await expectCaptureContract(api, world, {
      entityName: 'ProcessFeed',
      path: '/api/process-feed',
      body: feedEntry(parent.id),
      patch: { text: 'Edited' },
      deletable: false,
    });
  });

  it('rolls back a write that fails at commit: no entry change, no entity change, no webhook', async () => {
    const token = world.pmc.full.token;
    const parent = await createProcess(token);
    const entry = await postOk(api, '/api/process-feed', token, feedEntry(parent.id));
    await expectRolledBack(api, {
      partyId: world.pmc.id,
      entityName: 'ProcessFeed',
      table: 'process_feed',
      writes: [
        () => api.fetch('/api/process-feed', { method: 'POST', token, json: feedEntry(parent.id) }),
        () =>
          api.fetch(`/api/process-feed/${entry.id}`, { method: 'PATCH', token, json: { text: 'Edited' } }),
      ],
    });
  });
});
