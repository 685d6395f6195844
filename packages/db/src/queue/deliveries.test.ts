import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, truncateWebhooks, type TestDatabase } from '@platform/testkit';
import type { Knex } from 'knex';
import { readDeliveries, type DeliveriesAnswer } from './deliveries';
import { enqueueEntityChange } from './enqueue';
import { claim, ownRegistration, unitChange } from '../../tests/queue';

// What a delivery needs, as webhook_deliveries answers it and readDeliveries reads it: each row
// deliveries share (a change, a registration, an event) once, however many webhooks carry it.

let db: TestDatabase;
let knex: Knex;

const deliveries = async (ids: number[], interrupted: number[] = [], bare: number[] = []) => {
  const { rows } = await knex.raw<{ rows: { answer: DeliveriesAnswer }[] }>(
    'select webhook_deliveries(?::bigint[], ?::bigint[], ?::bigint[]) as answer',
    [ids, interrupted, bare],
  );
  return rows[0]!.answer;
};

beforeAll(async () => {
  db = await createTestDatabase();
  knex = db.knex;
});
afterAll(() => db.drop());
beforeEach(() => truncateWebhooks(knex));

describe('the deliveries of webhooks', () => {
  it('answers a change fanned out to two registrations once, and each delivery carries it', async () => {
    const a = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    const b = await ownRegistration(knex, 'http://127.0.0.1:9/b', { partyId: a.partyId });
    const change = unitChange(a.partyId, 7);
    await knex.transaction((trx) => enqueueEntityChange(trx, change));
    const ids = ((await knex('webhooks').orderBy('id', 'desc').pluck('id')) as string[]).map(Number);
    expect(ids).toHaveLength(2);

    const answer = await deliveries(ids);
    expect(answer.changes).toHaveLength(1);
    expect(answer.registrations.map((r) => r.id).sort()).toEqual([a.id, b.id].sort());
    expect(answer.events).toHaveLength(2);
    // in the order asked for, each with its registration's endpoint and the change's entity
    const read = readDeliveries(answer);
    expect(read.map((w) => w.id)).toEqual(ids);
    const byRegistration = new Map(read.map((w) => [w.registration_id, w]));
    expect(byRegistration.get(a.id)).toMatchObject({
      target_id: a.targetId,
      target_url: 'http://127.0.0.1:9/a',
      entity: change.entity,
      initiator_party_id: a.partyId,
      event_entity_name: 'Unit',
      event_type: 2,
      interrupted: false,
      registration_deleted: false,
    });
    expect(byRegistration.get(b.id)).toMatchObject({ target_id: b.targetId, entity: change.entity });
    // the claim answers the same
    const claimed = await claim(knex, { batch: 10, leaseMs: 60_000, dispatcherId: 'd1' });
    expect(claimed.map((w) => w.entity)).toEqual([change.entity, change.entity]);
  });

  it('answers no entity for interrupted and bare webhooks, and none at all for a change only they need', async () => {
    const a = await ownRegistration(knex, 'http://127.0.0.1:9/a');
    // a second registration of the party: the change fans out to both
    await ownRegistration(knex, 'http://127.0.0.1:9/b', { partyId: a.partyId });
    await knex.transaction((trx) => enqueueEntityChange(trx, unitChange(a.partyId, 7)));
    const [first, second] = ((await knex('webhooks').orderBy('id').pluck('id')) as string[]).map(Number);

    const one = readDeliveries(await deliveries([first!, second!], [first!]));
    expect(one.map((w) => [w.interrupted, w.entity])).toEqual([
      [true, null],
      [false, { id: 7 }],
    ]);
    const answer = await deliveries([first!, second!], [first!], [second!]);
    expect(answer.changes.map((c) => c.entity)).toEqual([null]);
    expect(readDeliveries(answer).map((w) => [w.interrupted, w.entity, w.initiator_party_id])).toEqual([
      [true, null, a.partyId],
      [false, null, a.partyId],
    ]);
  });

  it('answers an empty shape for no webhooks', async () => {
    expect(await deliveries([])).toEqual({ webhooks: [], changes: [], registrations: [], events: [] });
    expect(readDeliveries(await deliveries([]))).toEqual([]);
  });
});
