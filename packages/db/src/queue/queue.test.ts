import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebhookState } from '@platform/shared';
import { createTestDatabase, setWebhookState, type TestDatabase } from '@platform/testkit';
import { completeWebhooks } from './complete';
import { DUE_IDS_MAX } from '../notify';
import { enqueueEntityChange, groupKeyOf, type EntityChangeInput } from './enqueue';
import { applyOperatorAction } from './operator-apply';
import { newPartyPlacement, partyBucket, registrationEventRows } from '../buckets';
import { attemptResult, claim, listenForWakeUps, TEST_HEALTH_POLICY, unitChange } from '../../tests/queue';
import { releaseGroups } from './release-groups';

const { Created, Retrying, Successful, Failed, Aborted, Pending } = WebhookState;

let db: TestDatabase;
let partyId: number;
let otherPartyId: number;

async function registration(
  party: number,
  options: { shouldGroup?: boolean; events?: [string, number][]; deleted?: boolean } = {},
): Promise<number> {
  const [row] = await db
    .knex('webhook_registrations')
    .insert({
      party_id: party,
      bucket: partyBucket(db.knex, party),
      target_url: 'http://127.0.0.1:9/hook',
      should_group: options.shouldGroup ?? false,
      signing_secret: 'sealed',
      deleted: options.deleted ? new Date() : null,
    })
    .returning(['id', 'bucket']);
  const events = options.events ?? [
    ['Unit', 1],
    ['Unit', 2],
    ['Unit', 3],
  ];
  await db.knex('webhook_events').insert(
    registrationEventRows(
      row,
      events.map(([entity_name, type]) => ({ entity_name, type })),
    ),
  );
  return row.id;
}

function change(overrides: Partial<EntityChangeInput> = {}): EntityChangeInput {
  return { ...unitChange(partyId, 7), entity: { id: 7, name: 'Flat 7' }, ...overrides };
}

const webhooksOf = (registrationId: number) =>
  db
    .knex('webhooks')
    .where({ registration_id: registrationId })
    .orderBy('id')
    .select('id', 'state', 'group_key', 'group_seq');

beforeAll(async () => {
  db = await createTestDatabase();
  [{ id: partyId }, { id: otherPartyId }] = await db
    .knex('parties')
    .insert([
      { type: 2, name: 'Acme', ...(await newPartyPlacement(db.knex, null)) },
      { type: 2, name: 'Other', ...(await newPartyPlacement(db.knex, null)) },
    ])
    .returning('id');
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.knex.raw(
    'truncate webhooks, webhook_groups, entity_changes, webhook_events, webhook_registrations cascade',
  );
});

describe('enqueueEntityChange', () => {
  it('records the change and creates one Created webhook per subscribed live registration of the party', async () => {
    const subscribed = await registration(partyId);
    const unsubscribed = await registration(partyId, { events: [['Process', 2]] });
    const deleted = await registration(partyId, { deleted: true });
    const foreign = await registration(otherPartyId);
    const count = await db.knex.transaction((trx) => enqueueEntityChange(trx, change()));
    expect(count).toBe(1);
    expect(await webhooksOf(subscribed)).toMatchObject([
      { state: Created, group_key: null, group_seq: null },
    ]);
    for (const id of [unsubscribed, deleted, foreign]) expect(await webhooksOf(id)).toEqual([]);
    const [stored] = await db.knex('entity_changes').select('*');
    expect(stored).toMatchObject({
      entity_name: 'Unit',
      type: 2,
      entity_id: 7,
      entity: { id: 7, name: 'Flat 7' },
    });
  });

  it('stores the trace context given with each webhook, and none without (tracing off); the claim returns it', async () => {
    const id = await registration(partyId);
    const traceContext = {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=x',
    };
    await db.knex.transaction((trx) => enqueueEntityChange(trx, change({ traceContext })));
    await db.knex.transaction((trx) => enqueueEntityChange(trx, change()));
    const stored = await db
      .knex('webhooks')
      .where({ registration_id: id })
      .orderBy('id')
      .pluck('trace_context');
    expect(stored).toEqual([traceContext, null]);
    const claimed = await claim(db.knex, { batch: 10, leaseMs: 60_000, dispatcherId: 'a' });
    expect(claimed.sort((a, b) => a.id - b.id).map((w) => w.trace_context)).toEqual([traceContext, null]);
  });

  it('chains the changes of one entity: the first is the head, later ones wait in order', async () => {
    const grouped = await registration(partyId, { shouldGroup: true });
    await db.knex.transaction(async (trx) => {
      await enqueueEntityChange(trx, change({ type: 1 }));
      await enqueueEntityChange(trx, change({ type: 2 }));
    });
    await db.knex.transaction((trx) => enqueueEntityChange(trx, change({ type: 3 })));
    await db.knex.transaction((trx) => enqueueEntityChange(trx, change({ entityId: 8 })));
    expect(await webhooksOf(grouped)).toMatchObject([
      { state: Created, group_key: 'Unit:7', group_seq: 1 },
      { state: Pending, group_key: 'Unit:7', group_seq: 2 },
      { state: Pending, group_key: 'Unit:7', group_seq: 3 },
      { state: Created, group_key: 'Unit:8', group_seq: 1 },
    ]);
  });

  it('wakes the dispatchers on commit, only when it made webhooks: the first NOTIFY names the heads, the rest fold into one', async () => {
    const plain = await registration(partyId);
    const grouped = await registration(partyId, { shouldGroup: true });
    const { settle, close } = await listenForWakeUps(db.knex);
    try {
      await db.knex.transaction(async (trx) => {
        for (let i = 0; i < 3; i++) await enqueueEntityChange(trx, change());
        expect(await settle()).toEqual([]); // not before the commit
      });
      const heads = [...(await webhooksOf(plain)), ...(await webhooksOf(grouped))]
        .filter((w) => w.state === Created)
        .map((w) => w.id)
        .sort((a, b) => a - b);
      // the first change's two heads; its grouped successors are Pending, not due
      expect(heads).toHaveLength(4);
      expect(await settle()).toEqual([`due:${heads.slice(0, 2).join(',')}`, '']);
      // more heads than one payload names: a plain wake-up
      for (let i = 0; i < DUE_IDS_MAX - 1; i++) await registration(partyId);
      await db.knex.transaction((trx) => enqueueEntityChange(trx, change({ entityId: 9 })));
      expect(await settle()).toEqual(['']);
      // no subscribed registration: no webhook, no wake-up
      await db.knex.transaction((trx) => enqueueEntityChange(trx, change({ entityName: 'Notice' })));
      expect(await settle()).toEqual([]);
    } finally {
      await close();
    }
  });

  it('sends no NOTIFY when its caller says the transaction may commit on two nodes (p_notify false, docs/scaling.md R6)', async () => {
    const registrationId = await registration(partyId);
    const { settle, close } = await listenForWakeUps(db.knex);
    try {
      const c = change();
      await db.knex.raw(
        `select webhooks_enqueue(null, ?, ?::smallint, ?, ?::jsonb, ?, null, ?, null, p_notify => false)`,
        [c.entityName, c.type, c.entityId, JSON.stringify(c.entity), partyId, groupKeyOf(c)],
      );
      const [webhook] = await webhooksOf(registrationId);
      expect(webhook).toMatchObject({ state: Created });
      expect(await settle()).toEqual([]);
      // the operator's retry of a Failed webhook makes it due: woken only when the caller allows it
      await db.knex.transaction((trx) => setWebhookState(trx, webhook!.id, Failed));
      await db.knex.raw(
        `select * from webhooks_operator_apply('retry', ?::bigint[], false, null, now(), false)`,
        [[webhook!.id]],
      );
      expect(await webhooksOf(registrationId)).toMatchObject([{ state: Retrying }]);
      expect(await settle()).toEqual([]);
      await db.knex.transaction((trx) => setWebhookState(trx, webhook!.id, Failed));
      await db.knex.raw(`select * from webhooks_operator_apply('retry', ?::bigint[], false, null, now())`, [
        [webhook!.id],
      ]);
      expect(await settle()).toEqual(['']);
    } finally {
      await close();
    }
  });

  it('leaves nothing behind when the transaction rolls back', async () => {
    await registration(partyId, { shouldGroup: true });
    await expect(
      db.knex.transaction(async (trx) => {
        await enqueueEntityChange(trx, change());
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    for (const table of ['entity_changes', 'webhooks', 'webhook_groups']) {
      expect(await db.knex(table).count({ n: '*' })).toEqual([{ n: 0 }]);
    }
  });
});

describe('releaseGroups', () => {
  it('promote the oldest Pending of a released group, skipping ones that left the chain', async () => {
    const grouped = await registration(partyId, { shouldGroup: true });
    for (let i = 0; i < 4; i++) await db.knex.transaction((trx) => enqueueEntityChange(trx, change()));
    const [head, second, third, fourth] = await webhooksOf(grouped);
    // an operator aborts the second while the head still holds the group
    await db.knex.transaction((trx) =>
      applyOperatorAction(trx, { action: 'abort', ids: [second.id], actionId: null, now: new Date() }),
    );
    const promoted = await db.knex.transaction(async (trx) => {
      await setWebhookState(trx, head.id, Successful);
      return releaseGroups(trx, [{ registrationId: grouped, groupKey: 'Unit:7' }]);
    });
    expect(promoted).toEqual([third.id]);
    expect(await webhooksOf(grouped)).toMatchObject([
      { id: head.id, state: Successful },
      { id: second.id, state: Aborted },
      { id: third.id, state: Created },
      { id: fourth.id, state: Pending },
    ]);
    expect(await db.knex('webhook_groups').first('open_count')).toEqual({ open_count: 2 });
  });

  it('make the next change of a drained group its head', async () => {
    const grouped = await registration(partyId, { shouldGroup: true });
    await db.knex.transaction((trx) => enqueueEntityChange(trx, change()));
    const [head] = await webhooksOf(grouped);
    await db.knex.transaction(async (trx) => {
      await setWebhookState(trx, head.id, Successful);
      expect(await releaseGroups(trx, [{ registrationId: grouped, groupKey: 'Unit:7' }])).toEqual([]);
    });
    await db.knex.transaction((trx) => enqueueEntityChange(trx, change()));
    expect((await webhooksOf(grouped))[1]).toMatchObject({ state: Created, group_seq: 2 });
  });
});

const result = attemptResult;

const a = { dispatcherId: 'a', leaseMs: 60_000, policy: TEST_HEALTH_POLICY };
const stale = { dispatcherId: 'stale', leaseMs: 60_000, policy: TEST_HEALTH_POLICY };

describe('claimWebhooks and completeWebhooks', () => {
  it('claim due heads with their delivery data, lease them, and never hand one row to two dispatchers', async () => {
    const grouped = await registration(partyId, { shouldGroup: true });
    const plain = await registration(partyId);
    for (let i = 0; i < 3; i++) await db.knex.transaction((trx) => enqueueEntityChange(trx, change()));
    const first = await claim(db.knex, { batch: 10, leaseMs: 60_000, dispatcherId: 'a' });
    // the grouped chain offers only its head; the ungrouped registration all three
    expect(first.map((w) => w.registration_id).sort()).toEqual([grouped, plain, plain, plain].sort());
    expect(first[0]).toMatchObject({
      attempt: 1,
      target_url: 'http://127.0.0.1:9/hook',
      event_entity_name: 'Unit',
      entity: { id: 7 },
    });
    expect(await claim(db.knex, { batch: 10, leaseMs: 60_000, dispatcherId: 'b' })).toEqual([]);
    const leased = await db.knex('webhooks').whereNotNull('locked_by').select('locked_by', 'next_attempt_at');
    expect(leased).toHaveLength(4);
    for (const row of leased) expect(row.next_attempt_at.getTime()).toBeGreaterThan(Date.now() + 50_000);
  });

  it('records attempts, moves states, releases the group, and ignores a dispatcher whose lease was taken over', async () => {
    const grouped = await registration(partyId, { shouldGroup: true });
    for (let i = 0; i < 2; i++) await db.knex.transaction((trx) => enqueueEntityChange(trx, change()));
    const [head] = await claim(db.knex, { batch: 10, leaseMs: 60_000, dispatcherId: 'a' });
    // a stale dispatcher's result is not applied
    expect(await completeWebhooks(db.knex, stale, [result(head!)])).toEqual({
      applied: [],
      leased: [],
      disabled: [],
    });
    const completed = await completeWebhooks(db.knex, a, [result(head!)]);
    expect(completed.applied).toEqual([head!.id]);
    // the group's next webhook became its head and was leased straight to the releasing dispatcher
    const rows = await webhooksOf(grouped);
    expect(rows.map((r) => r.state)).toEqual([Successful, Created]);
    const [next] = completed.leased;
    expect(next).toMatchObject({
      id: rows[1]!.id,
      attempt: 1,
      group_key: head!.group_key,
      entity: { id: 7 },
    });
    expect(await db.knex('webhooks').where({ id: next!.id }).first('locked_by', 'attempt_count')).toEqual({
      locked_by: 'a',
      attempt_count: 1,
    });
    expect(await claim(db.knex, { batch: 10, leaseMs: 60_000, dispatcherId: 'b' })).toEqual([]);
    expect(await db.knex('webhook_attempts').select('webhook_id', 'number', 'status_code')).toEqual([
      { webhook_id: head!.id, number: 1, status_code: 200 },
    ]);
    const before = Date.now();
    await completeWebhooks(db.knex, a, [
      result(next!, {
        state: Retrying,
        statusCode: 500,
        errorKind: 'status',
        retryDelayMs: 300_000,
        releasesGroup: false,
      }),
    ]);
    const retried = await db.knex('webhooks').where({ id: next!.id }).first();
    expect(retried).toMatchObject({ state: Retrying, locked_by: null, attempt_count: 1 });
    expect(retried.next_attempt_at.getTime()).toBeGreaterThanOrEqual(before + 300_000 - 1000);
    expect(retried.next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now() + 300_000 + 1000);
  });
});

describe('a late result of an earlier try', () => {
  it('is not applied to the row its dispatcher holds again, so one try is counted once', async () => {
    const plain = await registration(partyId);
    await db.knex.transaction((trx) => enqueueEntityChange(trx, change()));
    // try 1 runs long: its lease runs out, the same dispatcher's next claim takes the row back as
    // interrupted (try 1 was counted), records that, and the retry (due at once) is leased to it
    const [first] = await claim(db.knex, { batch: 10, leaseMs: 60_000, dispatcherId: 'a' });
    expect(first).toMatchObject({ registration_id: plain, attempt: 1 });
    await db
      .knex('webhooks')
      .where({ id: first!.id })
      .update({ next_attempt_at: db.knex.raw(`now() - interval '1 second'`) });
    const [interrupted] = await claim(db.knex, { batch: 10, leaseMs: 60_000, dispatcherId: 'a' });
    expect(interrupted).toMatchObject({ id: first!.id, attempt: 1, interrupted: true });
    const recorded = await completeWebhooks(db.knex, a, [
      result(interrupted!, { state: Retrying, statusCode: null, errorKind: 'interrupted', retryDelayMs: 0 }),
    ]);
    expect(recorded.applied).toEqual([first!.id]);
    const [second] = await claim(db.knex, { batch: 10, leaseMs: 60_000, dispatcherId: 'a' });
    expect(second).toMatchObject({ id: first!.id, attempt: 2, interrupted: false });
    // try 1's own result arrives now: same dispatcher, row leased to it, but not its try
    expect((await completeWebhooks(db.knex, a, [result(first!)])).applied).toEqual([]);
    expect(
      await db
        .knex('webhook_attempts')
        .where({ webhook_id: first!.id })
        .orderBy('number')
        .select('number', 'error_kind'),
    ).toEqual([{ number: 1, error_kind: 'interrupted' }]);
    // try 2's result is applied
    expect((await completeWebhooks(db.knex, a, [result(second!)])).applied).toEqual([first!.id]);
    expect(await db.knex('webhooks').where({ id: first!.id }).first('state', 'attempt_count')).toEqual({
      state: Successful,
      attempt_count: 2,
    });
  });
});

describe('claiming a webhook of a deleted registration', () => {
  it('aborts it instead of handing it out', async () => {
    const id = await registration(partyId);
    await db.knex.transaction((trx) => enqueueEntityChange(trx, change()));
    await db.knex('webhook_registrations').where({ id }).update({ deleted: new Date() });
    const [claimed] = await claim(db.knex, { batch: 10, leaseMs: 60_000, dispatcherId: 'a' });
    expect(claimed).toMatchObject({ registration_deleted: true });
    expect(await db.knex('webhooks').first('state', 'attempt_count', 'locked_by')).toEqual({
      state: Aborted,
      attempt_count: 0,
      locked_by: null,
    });
    expect(await claim(db.knex, { batch: 10, leaseMs: 60_000, dispatcherId: 'a' })).toEqual([]);
  });
});
