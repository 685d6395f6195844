import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CLAIMABLE_WEBHOOK_STATES, WebhookState } from '@platform/shared';
import {
  createTestDatabase,
  seedParty,
  setWebhookState,
  type TestDatabase,
  waitForLockWaiter,
} from '@platform/testkit';
import { enqueueEntityChange } from './enqueue';
import { unitChange } from '../../tests/queue';
import { partyBucket } from '../buckets';
import { FIRST_GROUP, findGroupsToRepair, repairGroups, type GroupCursor } from './repair';

const { Created, Successful, Failed, Pending } = WebhookState;

let db: TestDatabase;
let partyId: number;

async function registration(
  options: { continueAfterFail?: boolean; deleted?: boolean } = {},
): Promise<number> {
  const [row] = await db
    .knex('webhook_registrations')
    .insert({
      party_id: partyId,
      bucket: partyBucket(db.knex, partyId),
      target_url: 'http://127.0.0.1:9/hook',
      should_group: true,
      should_group_continue_after_fail: options.continueAfterFail ?? false,
      signing_secret: 'sealed',
      deleted: options.deleted ? new Date() : null,
    })
    .returning(['id', 'bucket']);
  await db
    .knex('webhook_events')
    .insert({ registration_id: row.id, bucket: row.bucket, entity_name: 'Unit', type: 2 });
  return row.id;
}

const change = (entityId: number) => unitChange(partyId, entityId);

/** Enqueues `count` changes of Unit `entityId` (one group per subscribed registration). */
async function chain(entityId: number, count: number): Promise<void> {
  for (let i = 0; i < count; i++)
    await db.knex.transaction((trx) => enqueueEntityChange(trx, change(entityId)));
}

const statesOf = async (registrationId: number, groupKey: string) =>
  (
    await db
      .knex('webhooks')
      .where({ registration_id: registrationId, group_key: groupKey })
      .orderBy('group_seq')
      .select('state')
  ).map((r: { state: WebhookState }) => r.state);

const openCount = async (registrationId: number, groupKey: string) =>
  (
    await db
      .knex('webhook_groups')
      .where({ registration_id: registrationId, group_key: groupKey })
      .first('open_count')
  ).open_count as number;

/** Ends the head of a group without releasing it: the bug or lost statement the sweep exists for. */
async function endHeadWithoutRelease(
  registrationId: number,
  groupKey: string,
  state: WebhookState = WebhookState.Successful,
): Promise<number> {
  const [head] = await db
    .knex('webhooks')
    .where({ registration_id: registrationId, group_key: groupKey })
    .whereIn('state', CLAIMABLE_WEBHOOK_STATES)
    .pluck<number[]>('id');
  await setWebhookState(db.knex, head!, state, { completedAt: new Date() });
  return head!;
}

/** The whole sweep, in pages of `limit` groups. */
async function sweep(limit = 100) {
  const found = [];
  let after: GroupCursor | null = FIRST_GROUP;
  while (after) {
    const page = await findGroupsToRepair(db.knex, { after, limit });
    found.push(...page.groups);
    after = page.next;
  }
  return found;
}

beforeAll(async () => {
  db = await createTestDatabase();
  partyId = await seedParty(db.knex);
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.knex.raw(
    'truncate webhooks, webhook_groups, entity_changes, webhook_events, webhook_registrations cascade',
  );
});

describe('the repair sweep', () => {
  it('finds nothing in healthy groups: a head holds each chain, a Failed head blocks it', async () => {
    const plain = await registration();
    await chain(1, 3); // head + 2 Pending
    await chain(2, 2);
    const [head] = await db
      .knex('webhooks')
      .where({ registration_id: plain, group_key: 'Unit:2', group_seq: 1 })
      .pluck<number[]>('id');
    await setWebhookState(db.knex, head!, Failed);
    expect(await sweep()).toEqual([]);
  });

  it('promotes the lowest Pending of a group left without a head and sets open_count right', async () => {
    const plain = await registration();
    await chain(1, 3);
    await endHeadWithoutRelease(plain, 'Unit:1');
    expect(await statesOf(plain, 'Unit:1')).toEqual([Successful, Pending, Pending]);

    const found = await sweep();
    expect(found).toEqual([
      { registrationId: plain, groupKey: 'Unit:1', openCount: 3, actualOpen: 2, stranded: true },
    ]);
    const repair = await repairGroups(db.knex, found);
    expect(repair.promoted).toHaveLength(1);
    expect(repair.recounted).toEqual([{ registrationId: plain, groupKey: 'Unit:1', was: 3, now: 2 }]);
    expect(await statesOf(plain, 'Unit:1')).toEqual([Successful, Created, Pending]);
    expect(await openCount(plain, 'Unit:1')).toBe(2);
    const promoted = await db
      .knex('webhooks')
      .where({ id: repair.promoted[0]!.id })
      .first('group_seq', 'next_attempt_at');
    expect(promoted.group_seq).toBe(2);
    expect(promoted.next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now() + 1000);

    // repaired: the next sweep has nothing to do, and a second repair changes nothing
    expect(await sweep()).toEqual([]);
    expect(await repairGroups(db.knex, found)).toEqual({ promoted: [], recounted: [] });
  });

  it('treats a Failed webhook of a continue-after-fail registration as no head', async () => {
    const continuing = await registration({ continueAfterFail: true });
    await chain(1, 2);
    await endHeadWithoutRelease(continuing, 'Unit:1', 4);
    const found = await sweep();
    expect(found).toMatchObject([{ registrationId: continuing, stranded: true }]);
    await repairGroups(db.knex, found);
    expect(await statesOf(continuing, 'Unit:1')).toEqual([Failed, Created]);
  });

  it('recounts a drifted open_count without promoting while a head holds the group', async () => {
    const plain = await registration();
    await chain(1, 3);
    await db.knex('webhook_groups').update({ open_count: 1 });
    const found = await sweep();
    expect(found).toEqual([
      { registrationId: plain, groupKey: 'Unit:1', openCount: 1, actualOpen: 3, stranded: false },
    ]);
    expect(await repairGroups(db.knex, found)).toEqual({
      promoted: [],
      recounted: [{ registrationId: plain, groupKey: 'Unit:1', was: 1, now: 3 }],
    });
    expect(await statesOf(plain, 'Unit:1')).toEqual([Created, Pending, Pending]);
  });

  it('leaves groups of deleted registrations alone', async () => {
    const plain = await registration();
    await chain(1, 2);
    await endHeadWithoutRelease(plain, 'Unit:1');
    await db.knex('webhook_registrations').update({ deleted: new Date() });
    expect(await sweep()).toEqual([]);
    expect(await repairGroups(db.knex, [{ registrationId: plain, groupKey: 'Unit:1' }])).toEqual({
      promoted: [],
      recounted: [],
    });
    expect(await statesOf(plain, 'Unit:1')).toEqual([Successful, Pending]);
  });

  it('pages through many groups, each looked at once', async () => {
    const first = await registration();
    const second = await registration();
    for (let entity = 1; entity <= 7; entity++) await chain(entity, 2);
    for (const id of [first, second]) {
      for (const entity of [2, 5, 7]) await endHeadWithoutRelease(id, `Unit:${entity}`);
    }
    const found = await sweep(3); // 14 groups in pages of 3
    expect(found.map((g) => `${g.registrationId}/${g.groupKey}`)).toEqual(
      [first, second].flatMap((id) => ['Unit:2', 'Unit:5', 'Unit:7'].map((key) => `${id}/${key}`)),
    );
    expect((await repairGroups(db.knex, found)).promoted).toHaveLength(6);
    expect(await sweep(3)).toEqual([]);
  });

  it('counts what was committed while it waited for the group lock', async () => {
    const plain = await registration();
    await chain(1, 2);
    await endHeadWithoutRelease(plain, 'Unit:1');
    const found = await sweep();
    // an enqueue holds the group row (its upsert locks it) while the repair starts
    let release!: () => void;
    let enqueued!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const didEnqueue = new Promise<void>((r) => (enqueued = r));
    const producer = db.knex.transaction(async (trx) => {
      await enqueueEntityChange(trx, change(1));
      enqueued();
      await held;
    });
    await didEnqueue;
    const repairing = repairGroups(db.knex, found);
    await waitForLockWaiter(db.knex);
    release();
    await producer;
    const repair = await repairing;
    // the Pending added by the producer is counted: head (seq 2) + the new Pending (seq 3)
    expect(repair.promoted).toHaveLength(1);
    expect(await statesOf(plain, 'Unit:1')).toEqual([Successful, Created, Pending]);
    expect(await openCount(plain, 'Unit:1')).toBe(2);
  });
});
