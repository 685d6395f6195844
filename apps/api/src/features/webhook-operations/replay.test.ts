import {
  WebhookState,
  type OperatorActionRead,
  type Page,
  type WebhookOperationRead,
} from '@platform/shared';
import { bodyOf, propertyChange, seedChange, seedRegistration, waitForWebhook } from '@platform/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../../../tests/support/http';
import { expectAccessRules, useTestApi } from '../../../tests/support/api';
import { onlyDelivery, useDelivery } from '../../../tests/support/delivery';
import { createProperty, patchProperty, webhooksOf } from '../../../tests/support/webhooks';
import type { OperationRow } from './operation-kinds';
import { replayKind } from './replay-kind';

const { Created, Successful, Pending } = WebhookState;

const { api, world } = useTestApi({ world: true });
const delivery = useDelivery(api);

/** The database's clock now: windows compare with `entity_changes.created`, which it writes. */
const dbNow = async (): Promise<string> => {
  const { rows } = await api.db.knex.raw<{ rows: { now: Date }[] }>('select clock_timestamp() as now');
  // past the millisecond the last change may share
  await new Promise((resolve) => setTimeout(resolve, 5));
  return rows[0]!.now.toISOString();
};

/** Starts a replay and waits until its operation finished. */
async function replay(registrationId: number, body: unknown, token = world.pmc.full.token) {
  const response = await api.fetch(`/api/webhook-registrations/${registrationId}/replay`, {
    method: 'POST',
    token,
    json: body,
  });
  expect(response.status, await response.clone().text()).toBe(202);
  const started = (await response.json()) as WebhookOperationRead;
  await api.deps.operations.idle();
  const read = await api.fetch(`/api/webhook-operations/${started.id}`, { token });
  expect(read.status).toBe(200);
  return (await read.json()) as WebhookOperationRead;
}

const deliveredBody = (webhookId: number) => bodyOf(onlyDelivery(delivery.target, webhookId));

describe('replay (POST /api/webhook-registrations/{id}/replay)', () => {
  const token = () => world.pmc.full.token;
  let grouped: number;
  let updatesOnly: number;
  let window: { since: string; until: string };
  let windowChanges: number[];
  let firstProperty: number;

  beforeAll(async () => {
    grouped = (
      await seedRegistration(api.db.knex, {
        partyId: world.pmc.id,
        targetUrl: delivery.target.url,
        shouldGroup: true,
      })
    ).id;
    updatesOnly = (
      await seedRegistration(api.db.knex, {
        partyId: world.pmc.id,
        targetUrl: delivery.target.url,
        events: [{ entityName: 'Property', type: 2 }],
      })
    ).id;
    // before the window
    firstProperty = await createProperty(api, token(), 'Lindenhof');
    await patchProperty(api, token(), firstProperty, { notes: 'before' });
    const since = await dbNow();
    await patchProperty(api, token(), firstProperty, { notes: 'in window 1' });
    const secondProperty = await createProperty(api, token(), 'Eichenhof');
    await patchProperty(api, token(), secondProperty, { notes: 'in window 2' });
    await patchProperty(api, token(), firstProperty, { notes: 'in window 3' });
    // changes the registrations never receive: another party's, a managed party's (docs/webhooks.md#who-receives-a-change)
    await seedChange(api.db.knex, propertyChange(world.otherPmc.id, 900));
    await seedChange(api.db.knex, propertyChange(world.contractor.id, 901));
    const deleted = await api.fetch(`/api/properties/${secondProperty}`, {
      method: 'DELETE',
      token: token(),
    });
    expect(deleted.status).toBe(204);
    const until = await dbNow();
    // after the window: the property's current state differs from every snapshot replayed
    await patchProperty(api, token(), firstProperty, { notes: 'after' });
    window = { since, until };
    windowChanges = await api.db
      .knex('entity_changes')
      .where('created', '>=', since)
      .where('created', '<', until)
      .where('initiator_party_id', world.pmc.id)
      .orderBy('id')
      .pluck('id');
    expect(windowChanges).toHaveLength(5);
    // and the two of other parties
    expect(
      await api.db.knex('entity_changes').where('created', '>=', since).where('created', '<', until),
    ).toHaveLength(7);
    for (const hook of [...(await webhooksOf(api, grouped)), ...(await webhooksOf(api, updatesOnly))])
      await waitForWebhook(api.db.knex, hook.id, Successful);
  }, 60_000);

  it('counts in a dry run and changes nothing', async () => {
    const before = await webhooksOf(api, grouped);
    const groups = await api.db
      .knex('webhook_groups')
      .where({ registration_id: grouped })
      .orderBy('group_key');
    const operation = await replay(grouped, { ...window, dryRun: true });
    expect(operation).toMatchObject({
      action: 'replay',
      state: 'done',
      dryRun: true,
      registrationId: grouped,
      filter: window,
      total: 5,
      done: 5,
      changed: 5,
      skipped: {},
    });
    expect(await webhooksOf(api, grouped)).toEqual(before);
    expect(
      await api.db.knex('webhook_groups').where({ registration_id: grouped }).orderBy('group_key'),
    ).toEqual(groups);
  });

  it('delivers the window’s changes again: the bodies as they were, in the original order', async () => {
    const before = await webhooksOf(api, grouped);
    const operation = await replay(grouped, window);
    expect(operation).toMatchObject({ state: 'done', total: 5, done: 5, changed: 5, skipped: {} });

    const replayed = (await webhooksOf(api, grouped)).slice(before.length);
    // one new webhook per change of the window, in change order
    expect(replayed.map((hook) => hook.entity_change_id)).toEqual(windowChanges);
    for (const hook of replayed) await waitForWebhook(api.db.knex, hook.id, Successful);
    for (const hook of replayed) {
      const original = before.find((row) => row.entity_change_id === hook.entity_change_id)!;
      // the same body as the first delivery: the entity as it was then, the event, the initiator
      expect(deliveredBody(hook.id)).toEqual(deliveredBody(original.id));
    }
    const notes = replayed
      .map((hook) => deliveredBody(hook.id).entity)
      .filter((entity) => entity.id === firstProperty)
      .map((entity) => entity.notes);
    expect(notes).toEqual(['in window 1', 'in window 3']);
    // each group's replayed webhooks arrived in their order
    const arrival = (id: number) => delivery.target.requestsFor(id)[0]!.index;
    for (const key of new Set(replayed.map((hook) => hook.group_key))) {
      const ofGroup = replayed.filter((hook) => hook.group_key === key);
      expect(ofGroup.map((hook) => arrival(hook.id))).toEqual(
        ofGroup.map((hook) => arrival(hook.id)).sort((a, b) => a - b),
      );
    }

    // audited, and each new webhook says which action created it
    const trail = (await (
      await api.fetch('/api/operator-actions?action=registration.replay', { token: token() })
    ).json()) as Page<OperatorActionRead>;
    expect(trail.items.map((item) => [item.dryRun, item.changed, item.operationId])).toEqual([
      [false, 5, operation.id],
      [true, 5, expect.any(Number)],
    ]);
    expect(trail.items[0]).toMatchObject({
      accountId: world.pmc.full.id,
      registrationId: grouped,
      filter: window,
    });
    const lastActions = await api.db
      .knex('webhooks')
      .whereIn(
        'id',
        replayed.map((hook) => hook.id),
      )
      .pluck('last_action_id');
    expect(new Set(lastActions)).toEqual(new Set([trail.items[0]!.id]));
  });

  it('replays only what the registration subscribes to, of its own party, within the window', async () => {
    const before = await webhooksOf(api, updatesOnly);
    const operation = await replay(updatesOnly, window);
    expect(operation).toMatchObject({ state: 'done', total: 3, changed: 3, skipped: {} });
    const replayed = (await webhooksOf(api, updatesOnly)).slice(before.length);
    const changes = await api.db
      .knex('entity_changes')
      .whereIn(
        'id',
        replayed.map((hook) => hook.entity_change_id),
      )
      .orderBy('id')
      .select('type', 'initiator_party_id');
    expect(changes).toEqual(Array(3).fill({ type: 2, initiator_party_id: world.pmc.id }));
    expect(replayed.map((hook) => hook.entity_change_id)).toEqual(
      await api.db
        .knex('entity_changes')
        .whereIn('id', windowChanges)
        .where({ type: 2 })
        .orderBy('id')
        .pluck('id'),
    );
    for (const hook of replayed) await waitForWebhook(api.db.knex, hook.id, Successful);

    // a window with nothing in it
    const empty = await replay(updatesOnly, { since: '2001-01-01T00:00:00Z', until: '2001-01-02T00:00:00Z' });
    expect(empty).toMatchObject({ state: 'done', total: 0, changed: 0 });
  });

  it('puts a grouped change behind the open webhooks of its group', async () => {
    // the registration is paused: a new change's webhook stays open at the head of its group
    const paused = await api.fetch(`/api/webhook-registrations/${grouped}/pause`, {
      method: 'POST',
      token: token(),
    });
    expect(paused.status).toBe(200);
    await patchProperty(api, token(), firstProperty, { notes: 'while paused' });
    const [head] = (await webhooksOf(api, grouped)).slice(-1);
    expect(head).toMatchObject({ state: Created, group_key: `Property:${firstProperty}` });
    const before = await webhooksOf(api, grouped);

    const operation = await replay(grouped, window);
    expect(operation).toMatchObject({ state: 'done', total: 5, changed: 5 });
    const replayed = (await webhooksOf(api, grouped)).slice(before.length);
    const behindHead = replayed.filter((hook) => hook.group_key === head!.group_key);
    expect(behindHead.map((hook) => [hook.state, hook.group_seq])).toEqual([
      [Pending, head!.group_seq! + 1],
      [Pending, head!.group_seq! + 2],
    ]);

    const resumed = await api.fetch(`/api/webhook-registrations/${grouped}/resume`, {
      method: 'POST',
      token: token(),
    });
    expect(resumed.status).toBe(200);
    for (const hook of [head!, ...replayed]) await waitForWebhook(api.db.knex, hook.id, Successful);
    const arrival = (id: number) => delivery.target.requestsFor(id)[0]!.index;
    const order = [head!, ...behindHead].map((hook) => arrival(hook.id));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(behindHead.map((hook) => deliveredBody(hook.id).entity.notes)).toEqual([
      'in window 1',
      'in window 3',
    ]);
  });

  it('skips changes retention deleted since the selection, and everything of a registration deleted since', async () => {
    const [changeId] = windowChanges;
    const operation = { registration_id: updatesOnly, audit_id: null } as OperationRow;
    // applied in a transaction that is rolled back: nothing stays written
    const apply = async (registrationId: number, ids: number[]) => {
      const trx = await api.db.knex.transaction();
      try {
        return await replayKind.apply(
          trx,
          {
            ...operation,
            registration_id: registrationId,
            // as the operation recorded it when asked
            bucket: (await trx('webhook_registrations').where({ id: registrationId }).first('bucket')).bucket,
          },
          ids,
          new Date(),
        );
      } finally {
        await trx.rollback();
      }
    };
    // a change no registration event matches (a creation, for the updates-only registration) and one gone
    expect(await apply(updatesOnly, [changeId!, windowChanges[1]!, 2 ** 40])).toEqual({
      changed: 1,
      skipped: { 'not-subscribed': 1, pruned: 1 },
    });
    const gone = (
      await seedRegistration(api.db.knex, { partyId: world.pmc.id, targetUrl: delivery.target.url })
    ).id;
    await api.db.knex('webhook_registrations').where({ id: gone }).update({ deleted: new Date() });
    expect(await apply(gone, [changeId!])).toEqual({ changed: 0, skipped: { 'registration-deleted': 1 } });
  });

  it('refuses bad windows (400), registrations out of scope or deleted (404), and applies the access rules', async () => {
    await expectProblem(
      await api.fetch(`/api/webhook-registrations/${grouped}/replay`, {
        method: 'POST',
        token: token(),
        json: { since: window.until, until: window.since },
      }),
      400,
      { errors: { until: ['until must be after since'] } },
    );
    await expectProblem(
      await api.fetch(`/api/webhook-registrations/${grouped}/replay`, {
        method: 'POST',
        token: token(),
        json: { since: 'yesterday' },
      }),
      400,
    );
    await expectProblem(
      await api.fetch(`/api/webhook-registrations/${grouped}/replay`, {
        method: 'POST',
        token: world.otherPmc.full.token,
        json: window,
      }),
      404,
    );
    const gone = (
      await seedRegistration(api.db.knex, { partyId: world.pmc.id, targetUrl: delivery.target.url })
    ).id;
    await api.db.knex('webhook_registrations').where({ id: gone }).update({ deleted: new Date() });
    await expectProblem(
      await api.fetch(`/api/webhook-registrations/${gone}/replay`, {
        method: 'POST',
        token: token(),
        json: window,
      }),
      404,
    );
    // an empty window, so the allowed calls write nothing
    const nothing = { since: '2001-01-01T00:00:00Z', until: '2001-01-02T00:00:00Z' };
    await expectAccessRules(api, world, {
      method: 'POST',
      path: `/api/webhook-registrations/${updatesOnly}/replay`,
      body: nothing,
      allow: [1, 2],
      permission: 'Webhook.Update',
    });
    await api.deps.operations.idle();
  });
});
