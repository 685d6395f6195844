import { deliveryBody, enqueueEntityChange, releaseGroups } from '@platform/db';
import {
  WebhookState,
  type BlockedGroupRead,
  type WebhookDetailRead,
  type WebhookRead,
} from '@platform/shared';
import { setWebhookState, waitForLockWaiter } from '@platform/testkit';
import { describe, expect, it } from 'vitest';
import { expectProblem, readJson } from '../../../tests/support/http';
import { expectAccessRules, useTestApi } from '../../../tests/support/api';
import {
  act,
  createProperty,
  groupOf,
  patchProperty,
  register,
  targetOf,
  webhooksOf,
} from '../../../tests/support/webhooks';

const { Created, Retrying, Successful, Failed, Aborted, Pending, Resolved } = WebhookState;

const { api, world } = useTestApi({ world: true, truncateWebhooks: true });

const ids = async (response: Response) =>
  (await readJson<{ items: { id: number }[] }>(response)).items.map((item) => item.id);

/** A grouped registration of the PMC and one property changed `changes` times: a head and Pendings. */
async function groupedChain(changes: number, options: Record<string, unknown> = {}) {
  const token = world.pmc.full.token;
  const registration = await register(api, token, { shouldGroup: true, ...options });
  const propertyId = await createProperty(api, token);
  for (let i = 1; i < changes; i++) await patchProperty(api, token, propertyId, { notes: `change ${i}` });
  const hooks = await webhooksOf(api, registration.id);
  return { registration, propertyId, groupKey: `Property:${propertyId}`, hooks: hooks.map((w) => w.id) };
}

describe('reading webhooks', () => {
  it('lists with filters, searches, reads with the delivery body, and lists attempts newest first', async () => {
    const token = world.pmc.full.token;
    const registration = await register(api, token);
    const other = await register(api, token, {
      enabledEvents: [{ entityName: 'Property', type: 2 }],
      shouldGroup: true,
    });
    const propertyId = await createProperty(api, token);
    await patchProperty(api, token, propertyId, { city: 'Potsdam' });
    const secondProperty = await createProperty(api, token, 'Eichenhof');
    const [created, updated, createdSecond] = (await webhooksOf(api, registration.id)).map((w) => w.id);
    const [otherUpdated] = (await webhooksOf(api, other.id)).map((w) => w.id);
    await setWebhookState(api.db.knex, updated!, Successful);
    const all = [created!, updated!, otherUpdated!, createdSecond!].sort((a, b) => a - b);

    expect(await ids(await api.fetch('/api/webhooks', { token }))).toEqual(all);
    expect(
      await ids(await api.fetch('/api/webhooks?SortByAttributeName=id&AscendingOrder=false', { token })),
    ).toEqual([...all].reverse());
    expect(await ids(await api.fetch(`/api/webhooks?state=${Successful}`, { token }))).toEqual([updated]);
    expect(await ids(await api.fetch(`/api/webhooks?registrationId=${other.id}`, { token }))).toEqual([
      otherUpdated,
    ]);
    expect(
      await ids(await api.fetch(`/api/webhooks?entityName=property&entityId=${secondProperty}`, { token })),
    ).toEqual([createdSecond]);
    const created0 = api.clock.now().toISOString();
    expect(
      await ids(
        await api.fetch(`/api/webhooks?createdFrom=2000-01-01T00:00:00Z&createdTo=${created0}`, { token }),
      ),
    ).toEqual([]);
    expect(
      await ids(await api.fetch('/api/webhooks?createdFrom=2000-01-01&PageSize=3&PageNumber=2', { token })),
    ).toEqual([createdSecond]);

    const search = (body: unknown) =>
      api.fetch('/api/webhooks/search', { method: 'POST', token, json: body });
    expect(
      await ids(
        await search({
          filters: [
            { attribute: 'state', operator: 'in', value: [Created, Pending] },
            { attribute: 'eventType', operator: 'eq', value: 1 },
          ],
          sort: [{ attribute: 'id', ascending: false }],
        }),
      ),
    ).toEqual([createdSecond, created]);
    expect(
      await ids(
        await search({ filters: [{ attribute: 'groupKey', operator: 'startsWith', value: 'property:' }] }),
      ),
    ).toEqual([otherUpdated]);

    const detail = await readJson<WebhookDetailRead>(await api.fetch(`/api/webhooks/${updated}`, { token }));
    const change = await api.db.knex('entity_changes').where({ entity_name: 'Property', type: 2 }).first();
    // change ids start at the day's range (10^10 × day): beyond 32 bits
    expect(change.id).toBeGreaterThan(2 ** 31);
    expect(
      await ids(
        await search({ filters: [{ attribute: 'entityChangeId', operator: 'eq', value: change.id }] }),
      ),
    ).toEqual(await api.db.knex('webhooks').where({ entity_change_id: change.id }).orderBy('id').pluck('id'));
    const event = await api.db
      .knex('webhook_events')
      .where({ registration_id: registration.id, type: 2 })
      .first();
    expect(detail).toEqual({
      id: updated,
      registrationId: registration.id,
      partyId: world.pmc.id,
      partyName: world.pmc.name,
      eventId: event.id,
      eventType: 2,
      entityName: 'Property',
      entityId: propertyId,
      entityChangeId: change.id,
      state: Successful,
      attemptCount: 0,
      nextAttemptAt: null,
      groupKey: null,
      groupSeq: null,
      initiatorPartyId: world.pmc.id,
      initiatorPartyName: world.pmc.name,
      initiatorAccountId: world.pmc.full.id,
      created: expect.any(String),
      lastModified: null,
      completedAt: null,
      targetUrl: 'https://hooks.example.com/platform',
      lastAttemptAt: null,
      lastStatusCode: null,
      lastErrorKind: null,
      lastRequest: null,
      lastAction: null,
      payload: deliveryBody(change, event),
    });
    // the delivery body (docs/webhooks.md#the-delivery-request): the entity as the API reads it, the subscribed event, the initiator
    const property = await readJson(await api.fetch(`/api/properties/${propertyId}`, { token }));
    expect(detail.payload).toEqual({
      entity: property,
      event: {
        id: event.id,
        type: 2,
        entityName: 'Property',
        created: event.created.toISOString(),
        lastModified: null,
        deleted: null,
      },
      initiatorPartyId: world.pmc.id,
      initiatorAccountId: world.pmc.full.id,
    });
    // the list shows no payload, and a due webhook its next attempt
    const listed = await readJson<{ items: WebhookRead[] }>(
      await api.fetch(`/api/webhooks?state=${Created}`, { token }),
    );
    expect(listed.items[0]).not.toHaveProperty('payload');
    expect(listed.items[0]!.nextAttemptAt).toEqual(expect.any(String));

    await api.db.knex('webhook_attempts').insert(
      [1, 2, 3].map((number) => ({
        webhook_id: updated,
        number,
        started_at: new Date(Date.UTC(2026, 0, number)),
        duration_ms: 100 * number,
        status_code: number === 3 ? 204 : 500,
        error_kind: number === 3 ? null : 'status',
        response_body: number === 3 ? null : 'oops',
      })),
    );
    const attempts = await readJson<{ items: { number: number; statusCode: number }[]; totalCount: number }>(
      await api.fetch(`/api/webhooks/${updated}/attempts`, { token }),
    );
    expect(attempts.totalCount).toBe(3);
    expect(attempts.items.map((a) => [a.number, a.statusCode])).toEqual([
      [3, 204],
      [2, 500],
      [1, 500],
    ]);
    expect(attempts.items[1]).toEqual({
      id: expect.any(Number),
      webhookId: updated,
      number: 2,
      startedAt: '2026-01-02T00:00:00.000Z',
      durationMs: 200,
      statusCode: 500,
      errorKind: 'status',
      responseBody: 'oops',
      // an attempt recorded without its request (as before requests were kept)
      sentRequest: true,
      skipReason: null,
      request: null,
      responseHeaders: null,
      created: expect.any(String),
    });
    expect(
      (await readJson<{ items: unknown[] }>(await api.fetch(`/api/webhooks/${created}/attempts`, { token })))
        .items,
    ).toEqual([]);
  });

  it('names the registration’s party and the initiator’s, the latter null once its party row is gone', async () => {
    const token = world.admin.full.token;
    const registration = await register(api, token, { partyId: world.pmc.id });
    await createProperty(api, world.pmc.full.token);
    const [hook] = await webhooksOf(api, registration.id);
    const names = (webhook: WebhookRead) => [webhook.partyName, webhook.initiatorPartyName];
    const read = async () => readJson<WebhookRead>(await api.fetch(`/api/webhooks/${hook!.id}`, { token }));
    const listed = async () =>
      (await readJson<{ items: WebhookRead[] }>(await api.fetch('/api/webhooks', { token }))).items[0]!;
    expect(names(await read())).toEqual([world.pmc.name, world.pmc.name]);
    expect(names(await listed())).toEqual([world.pmc.name, world.pmc.name]);

    // no foreign key holds a change's initiator: a party row gone leaves its id and no name
    await api.db
      .knex('entity_changes')
      .whereIn('id', api.db.knex('webhooks').where({ id: hook!.id }).select('entity_change_id'))
      .update({ initiator_party_id: 2147483647 });
    expect(await read()).toMatchObject({ initiatorPartyId: 2147483647, initiatorPartyName: null });
    expect(names(await listed())).toEqual([world.pmc.name, null]);
    await setWebhookState(api.db.knex, hook!.id, Failed);
    expect(names(await readJson<WebhookRead>(await act(api, token, hook!.id, 'retry')))).toEqual([
      world.pmc.name,
      null,
    ]);
  });

  it('refuses bad filters with a 400 naming each one', async () => {
    const token = world.pmc.full.token;
    for (const [query, field, message] of [
      ['state=8', 'state', /at most 7/],
      ['state=x', 'state', /whole number/],
      [`state=${Created}&state=${Retrying}`, 'state', /given once/],
      ['registrationId=0', 'registrationId', /at least 1/],
      ['entityName=Account', 'entityName', /Account cannot be subscribed to.*supported: Party/],
      ['entityName=Nope', 'entityName', /Unknown entity name/],
      ['entityId=-1', 'entityId', /whole number/],
      ['createdFrom=yesterday', 'createdFrom', /ISO 8601/],
      ['createdFrom=2026-02-30', 'createdFrom', /ISO 8601/],
      ['createdFrom=2026-02-02&createdTo=2026-02-01', 'createdTo', /not be before/],
      ['SortByAttributeName=payload', 'SortByAttributeName', /allowed: id, registrationId/],
      ['color=red', 'color', /Unknown field/],
    ] as const) {
      const problem = await expectProblem(await api.fetch(`/api/webhooks?${query}`, { token }), 400);
      expect(problem.errors?.[field]?.join(' '), query).toMatch(message);
    }
    await expectProblem(
      await api.fetch('/api/webhooks/search', {
        method: 'POST',
        token,
        json: { filters: [{ attribute: 'entity', operator: 'eq', value: 1 }] },
      }),
      400,
    );
    await expectProblem(await api.fetch('/api/webhooks/abc', { token }), 400);
  });

  it('scopes every webhook operation to the registrations of the caller’s party (out of scope = 404)', async () => {
    const foreign = await register(api, world.otherPmc.full.token);
    const mine = await register(api, world.pmc.full.token);
    await createProperty(api, world.otherPmc.full.token);
    await createProperty(api, world.pmc.full.token);
    const [foreignHook] = (await webhooksOf(api, foreign.id)).map((w) => w.id);
    const [myHook] = (await webhooksOf(api, mine.id)).map((w) => w.id);
    await setWebhookState(api.db.knex, foreignHook!, Failed);
    const token = world.pmc.full.token;

    expect(await ids(await api.fetch('/api/webhooks', { token }))).toEqual([myHook]);
    expect(await ids(await api.fetch('/api/webhooks/search', { method: 'POST', token, json: {} }))).toEqual([
      myHook,
    ]);
    expect(await ids(await api.fetch('/api/webhooks', { token: world.admin.full.token }))).toEqual([
      foreignHook,
      myHook,
    ]);
    await expectProblem(await api.fetch(`/api/webhooks/${foreignHook}`, { token }), 404);
    await expectProblem(await api.fetch(`/api/webhooks/${foreignHook}/attempts`, { token }), 404);
    for (const action of ['abort', 'resolve', 'retry'] as const) {
      await expectProblem(await act(api, token, foreignHook!, action), 404);
    }
    expect((await webhooksOf(api, foreign.id))[0]!.state).toBe(Failed);
    // Admin may act on any party's webhook
    expect(
      (await readJson<WebhookRead>(await act(api, world.admin.full.token, foreignHook!, 'retry'))).state,
    ).toBe(Retrying);
  });

  it('applies the access rules of every operation (others than Admin and PMC: 403)', async () => {
    const registration = await register(api, world.admin.full.token, { partyId: world.pmc.id });
    const propertyId = await createProperty(api, world.pmc.full.token);
    for (let i = 0; i < 40; i++)
      await patchProperty(api, world.pmc.full.token, propertyId, { notes: `n${i}` });
    const hooks = (await webhooksOf(api, registration.id)).map((w) => w.id);
    let next = 0;
    // each allowed call may end a webhook, so every call gets one of its own
    const fresh = (suffix: string) => () => `/api/webhooks/${hooks[next++]}${suffix}`;
    const reads = { allow: [1, 2] as const, permission: 'Webhook.Read' as const };
    const updates = { allow: [1, 2] as const, permission: 'Webhook.Update' as const };
    await expectAccessRules(api, world, { method: 'GET', path: '/api/webhooks', ...reads });
    await expectAccessRules(api, world, { method: 'POST', path: '/api/webhooks/search', body: {}, ...reads });
    await expectAccessRules(api, world, { method: 'GET', path: `/api/webhooks/${hooks[0]}`, ...reads });
    await expectAccessRules(api, world, {
      method: 'GET',
      path: `/api/webhooks/${hooks[0]}/attempts`,
      ...reads,
    });
    await expectAccessRules(api, world, {
      method: 'GET',
      path: '/api/webhook-groups?blocked=true',
      ...reads,
    });
    await expectAccessRules(api, world, { method: 'POST', path: fresh('/abort'), ...updates });
    await expectAccessRules(api, world, { method: 'POST', path: fresh('/resolve'), ...updates });
    await setWebhookState(api.db.knex, hooks.slice(next), Failed);
    await expectAccessRules(api, world, { method: 'POST', path: fresh('/retry'), ...updates });
  });
});

describe('abort and resolve', () => {
  it('end the head of a group and make the next webhook of the group due', async () => {
    const { registration, groupKey, hooks } = await groupedChain(4);
    const token = world.pmc.full.token;
    expect((await webhooksOf(api, registration.id)).map((w) => w.state)).toEqual([
      Created,
      Pending,
      Pending,
      Pending,
    ]);
    await api.db
      .knex('webhooks')
      .where({ id: hooks[0] })
      .update({ locked_by: 'dispatcher-1', attempt_count: 1 });

    const resolved = await readJson<WebhookRead>(await act(api, token, hooks[0]!, 'resolve'));
    expect(resolved).toMatchObject({
      id: hooks[0],
      state: Resolved,
      attemptCount: 1,
      nextAttemptAt: null,
      completedAt: api.clock.now().toISOString(),
    });
    let rows = await webhooksOf(api, registration.id);
    expect(rows.map((w) => w.state)).toEqual([Resolved, Created, Pending, Pending]);
    expect(rows[0]!.locked_by).toBeNull();
    expect(await groupOf(api, registration.id, groupKey)).toEqual({ next_seq: 4, open_count: 3 });

    const aborted = await readJson<WebhookRead>(await act(api, token, hooks[1]!, 'abort'));
    expect(aborted).toMatchObject({ state: Aborted, completedAt: api.clock.now().toISOString() });
    rows = await webhooksOf(api, registration.id);
    expect(rows.map((w) => w.state)).toEqual([Resolved, Aborted, Created, Pending]);
    expect(await groupOf(api, registration.id, groupKey)).toEqual({ next_seq: 4, open_count: 2 });
  });

  it('take a Pending webhook out of its chain without promoting anything; promotion skips it', async () => {
    const { registration, groupKey, hooks } = await groupedChain(4);
    const token = world.pmc.full.token;
    expect((await readJson<WebhookRead>(await act(api, token, hooks[1]!, 'abort'))).state).toBe(Aborted);
    expect((await readJson<WebhookRead>(await act(api, token, hooks[2]!, 'resolve'))).state).toBe(Resolved);
    expect((await webhooksOf(api, registration.id)).map((w) => w.state)).toEqual([
      Created,
      Aborted,
      Resolved,
      Pending,
    ]);
    expect(await groupOf(api, registration.id, groupKey)).toEqual({ next_seq: 4, open_count: 2 });
    await act(api, token, hooks[0]!, 'resolve');
    expect((await webhooksOf(api, registration.id)).map((w) => w.state)).toEqual([
      Resolved,
      Aborted,
      Resolved,
      Created,
    ]);
    await act(api, token, hooks[3]!, 'resolve');
    expect(await groupOf(api, registration.id, groupKey)).toEqual({ next_seq: 4, open_count: 0 });
    // a drained group: the next change is its head at once
    const propertyId = Number(groupKey.split(':')[1]);
    await patchProperty(api, token, propertyId, { notes: 'later' });
    expect((await webhooksOf(api, registration.id)).map((w) => w.state)).toEqual([
      Resolved,
      Aborted,
      Resolved,
      Resolved,
      Created,
    ]);
  });

  it('release a group held by a Failed webhook, which is then no longer listed as blocked', async () => {
    const { registration, groupKey, hooks } = await groupedChain(3);
    const token = world.pmc.full.token;
    await setWebhookState(api.db.knex, hooks[0]!, Failed);
    const blocked = await readJson<{ items: BlockedGroupRead[]; totalCount: number }>(
      await api.fetch('/api/webhook-groups?blocked=true', { token }),
    );
    const pendings = await api.db.knex('webhooks').whereIn('id', hooks.slice(1)).min({ oldest: 'created' });
    expect(blocked).toMatchObject({ totalCount: 1 });
    expect(blocked.items).toEqual([
      {
        registrationId: registration.id,
        partyId: world.pmc.id,
        groupKey,
        blockerWebhookId: hooks[0],
        blockedSince: null,
        pendingCount: 2,
        oldestPendingCreated: (pendings[0]!.oldest as Date).toISOString(),
      },
    ]);
    // not visible to another PMC
    expect(
      (
        await readJson<{ items: unknown[] }>(
          await api.fetch('/api/webhook-groups?blocked=true', { token: world.otherPmc.full.token }),
        )
      ).items,
    ).toEqual([]);
    expect(
      (
        await readJson<{ items: unknown[] }>(
          await api.fetch(`/api/webhook-groups?blocked=TRUE&registrationId=${registration.id + 1}`, {
            token,
          }),
        )
      ).items,
    ).toEqual([]);

    expect((await readJson<WebhookRead>(await act(api, token, hooks[0]!, 'abort'))).state).toBe(Aborted);
    expect((await webhooksOf(api, registration.id)).map((w) => w.state)).toEqual([Aborted, Created, Pending]);
    expect(await groupOf(api, registration.id, groupKey)).toEqual({ next_seq: 3, open_count: 2 });
    expect(
      (await readJson<{ items: unknown[] }>(await api.fetch('/api/webhook-groups?blocked=true', { token })))
        .items,
    ).toEqual([]);
  });

  it('leave a group alone when its Failed webhook already released it (continue after fail)', async () => {
    const { registration, groupKey, hooks } = await groupedChain(3, { shouldGroupContinueAfterFail: true });
    // as the dispatcher does: the head fails and, continuing after failure, releases its group
    await api.db.knex.transaction(async (trx) => {
      await setWebhookState(trx, hooks[0]!, Failed);
      await releaseGroups(trx, [{ registrationId: registration.id, groupKey }]);
    });
    expect((await webhooksOf(api, registration.id)).map((w) => w.state)).toEqual([Failed, Created, Pending]);
    expect(
      (
        await readJson<{ items: unknown[] }>(
          await api.fetch('/api/webhook-groups?blocked=true', { token: world.pmc.full.token }),
        )
      ).items,
    ).toEqual([]);
    await act(api, world.pmc.full.token, hooks[0]!, 'resolve');
    expect((await webhooksOf(api, registration.id)).map((w) => w.state)).toEqual([
      Resolved,
      Created,
      Pending,
    ]);
    expect(await groupOf(api, registration.id, groupKey)).toEqual({ next_seq: 3, open_count: 2 });
  });

  it('end an ungrouped webhook in any non-final state and refuse final ones with 409', async () => {
    const token = world.pmc.full.token;
    const registration = await register(api, token);
    const propertyId = await createProperty(api, token);
    for (let i = 0; i < 6; i++) await patchProperty(api, token, propertyId, { notes: `n${i}` });
    const hooks = (await webhooksOf(api, registration.id)).map((w) => w.id);
    const states = [Created, Retrying, Successful, Failed, Aborted, Pending, Resolved];
    for (const [index, state] of states.entries()) await setWebhookState(api.db.knex, hooks[index]!, state);

    for (const state of [Created, Retrying, Failed]) {
      const index = states.indexOf(state);
      const action = state === Retrying ? 'resolve' : 'abort';
      const ended = await readJson<WebhookRead>(await act(api, token, hooks[index]!, action));
      expect(ended.state, `from ${state}`).toBe(action === 'resolve' ? Resolved : Aborted);
    }
    for (const index of [Successful, Aborted, Resolved].map((state) => states.indexOf(state))) {
      const before = await api.db.knex('webhooks').where({ id: hooks[index] }).first();
      for (const action of ['abort', 'resolve'] as const) {
        const problem = await expectProblem(await act(api, token, hooks[index]!, action), 409);
        expect(problem.detail).toMatch(/a final state/);
        // the state by its name, without the number the API stores
        expect(problem.detail).not.toMatch(/\(\d\)/);
      }
      expect(await api.db.knex('webhooks').where({ id: hooks[index] }).first()).toEqual(before);
    }
    expect((await webhooksOf(api, registration.id)).map((w) => w.state)).toEqual([
      Aborted,
      Resolved,
      Successful,
      Aborted,
      Aborted,
      Pending,
      Resolved,
    ]);
    expect(await api.db.knex('webhook_groups').count({ n: '*' })).toEqual([{ n: 0 }]);
    await expectProblem(await act(api, token, 999999999, 'abort'), 404);
  });

  it('promote a webhook whose enqueue held the group while the release waited for it', async () => {
    const { registration, propertyId, groupKey, hooks } = await groupedChain(1);
    // a change of the property is being committed: its transaction holds the group's row lock
    const writer = await api.db.knex.transaction();
    await enqueueEntityChange(writer, {
      entityName: 'Property',
      type: 2,
      entityId: propertyId,
      entity: { id: propertyId },
      initiatorPartyId: world.pmc.id,
      initiatorAccountId: world.pmc.full.id,
    });
    const resolving = act(api, world.pmc.full.token, hooks[0]!, 'resolve');
    // the resolve now waits for the group; the writer commits a Pending webhook meanwhile
    await waitForLockWaiter(api.db.knex);
    await writer.commit();
    expect((await resolving).status).toBe(200);
    // the release saw the webhook committed while it waited: it is the new head, not stranded
    expect((await webhooksOf(api, registration.id)).map((w) => w.state)).toEqual([Resolved, Created]);
    expect(await groupOf(api, registration.id, groupKey)).toEqual({ next_seq: 2, open_count: 1 });
  });

  it('wake the dispatchers when a release makes a webhook due', async () => {
    const { hooks } = await groupedChain(2);
    // a connection of its own, outside any transaction, as a dispatcher listens
    const client = (await api.db.knex.client.acquireConnection()) as {
      query(sql: string): Promise<unknown>;
      on(event: 'notification', listener: (message: { channel: string }) => void): void;
      removeAllListeners(event: string): void;
    };
    try {
      const notified = new Promise<string>((resolve) => client.on('notification', (n) => resolve(n.channel)));
      await client.query('listen webhook_due');
      await act(api, world.pmc.full.token, hooks[0]!, 'resolve');
      expect(await notified).toBe('webhook_due');
    } finally {
      await client.query('unlisten *');
      client.removeAllListeners('notification');
      await api.db.knex.client.releaseConnection(client);
    }
  });
});

describe('retry', () => {
  it('gives a Failed webhook one more attempt: Retrying, due now, attempts kept', async () => {
    const { registration, groupKey, hooks } = await groupedChain(2);
    const token = world.pmc.full.token;
    await setWebhookState(api.db.knex, hooks[0]!, Failed, { completedAt: new Date() });
    await api.db
      .knex('webhooks')
      .where({ id: hooks[0] })
      .update({ attempt_count: 7, next_attempt_at: new Date('2020-01-01') });
    const retried = await readJson<WebhookRead>(await act(api, token, hooks[0]!, 'retry'));
    expect(retried).toMatchObject({ state: Retrying, attemptCount: 7, completedAt: null });
    const row = await api.db.knex('webhooks').where({ id: hooks[0] }).first();
    expect(Math.abs(row.next_attempt_at.getTime() - Date.now())).toBeLessThan(60_000);
    // still the head of its group: nothing else moved
    expect((await webhooksOf(api, registration.id)).map((w) => w.state)).toEqual([Retrying, Pending]);
    expect(await groupOf(api, registration.id, groupKey)).toEqual({ next_seq: 2, open_count: 2 });
  });

  it('half-opens the open breaker of the webhook’s target, in the same transaction', async () => {
    const token = world.pmc.full.token;
    const registration = await register(api, token, { targetUrl: 'https://fixed.example.com/hook' });
    const bystander = await register(api, token, { targetUrl: 'https://still-down.example.com/hook' });
    await createProperty(api, token);
    const [failed] = (await webhooksOf(api, registration.id)).map((w) => w.id);
    await setWebhookState(api.db.knex, failed!, Failed, { completedAt: new Date() });
    const openUntil = new Date(Date.now() + 3_600_000);
    for (const id of [registration.id, bystander.id]) {
      await targetOf(api, id).update({ breaker_state: 'open', open_until: openUntil, trial_until: null });
    }

    // a refused retry changes nothing
    await setWebhookState(api.db.knex, failed!, Successful);
    await expectProblem(await act(api, token, failed!, 'retry'), 409);
    expect((await targetOf(api, registration.id).first()).breaker_state).toBe('open');

    await setWebhookState(api.db.knex, failed!, Failed);
    expect((await readJson<WebhookRead>(await act(api, token, failed!, 'retry'))).state).toBe(Retrying);
    // the next delivery is the trial, with no cool-down to wait out; other targets keep theirs
    expect(await targetOf(api, registration.id).first()).toMatchObject({
      breaker_state: 'half-open',
      trial_until: null,
    });
    expect((await targetOf(api, bystander.id).first()).breaker_state).toBe('open');
  });

  it('refuses every state but Failed with 409', async () => {
    const token = world.pmc.full.token;
    const registration = await register(api, token);
    const propertyId = await createProperty(api, token);
    for (let i = 0; i < 5; i++) await patchProperty(api, token, propertyId, { notes: `n${i}` });
    const hooks = (await webhooksOf(api, registration.id)).map((w) => w.id);
    for (const [index, state] of [Created, Retrying, Successful, Aborted, Pending, Resolved].entries()) {
      await setWebhookState(api.db.knex, hooks[index]!, state);
      const problem = await expectProblem(await act(api, token, hooks[index]!, 'retry'), 409);
      expect(problem.detail).toMatch(/^Only a Failed webhook can be retried/);
      expect((await api.db.knex('webhooks').where({ id: hooks[index] }).first()).state).toBe(state);
    }
    // a Failed webhook of a deleted registration (one a concurrent enqueue slipped in) stays put
    await api.fetch(`/api/webhook-registrations/${registration.id}`, { method: 'DELETE', token });
    await setWebhookState(api.db.knex, hooks[0]!, Failed);
    const problem = await expectProblem(await act(api, token, hooks[0]!, 'retry'), 409);
    expect(problem.detail).toMatch(/registration of webhook \d+ was deleted/);
    expect((await api.db.knex('webhooks').where({ id: hooks[0] }).first()).state).toBe(Failed);
  });

  it('puts a Failed webhook of a continue-after-fail registration back in its group, next in line', async () => {
    const { registration, groupKey, hooks } = await groupedChain(3, { shouldGroupContinueAfterFail: true });
    const token = world.pmc.full.token;
    await api.db.knex.transaction(async (trx) => {
      await setWebhookState(trx, hooks[0]!, Failed);
      await releaseGroups(trx, [{ registrationId: registration.id, groupKey }]);
    });
    expect((await webhooksOf(api, registration.id)).map((w) => w.state)).toEqual([Failed, Created, Pending]);
    // another webhook holds the group, so the retried one waits, ahead of the later ones
    expect((await readJson<WebhookRead>(await act(api, token, hooks[0]!, 'retry'))).state).toBe(Pending);
    expect(await groupOf(api, registration.id, groupKey)).toEqual({ next_seq: 3, open_count: 3 });
    await act(api, token, hooks[1]!, 'resolve');
    expect((await webhooksOf(api, registration.id)).map((w) => w.state)).toEqual([
      Created,
      Resolved,
      Pending,
    ]);

    // once the group is idle, a retried Failed webhook is due at once
    await act(api, token, hooks[0]!, 'resolve');
    await api.db.knex.transaction(async (trx) => {
      await setWebhookState(trx, hooks[2]!, Failed);
      await releaseGroups(trx, [{ registrationId: registration.id, groupKey }]);
    });
    expect(await groupOf(api, registration.id, groupKey)).toEqual({ next_seq: 3, open_count: 0 });
    expect((await readJson<WebhookRead>(await act(api, token, hooks[2]!, 'retry'))).state).toBe(Retrying);
    expect(await groupOf(api, registration.id, groupKey)).toEqual({ next_seq: 3, open_count: 1 });
  });
});
