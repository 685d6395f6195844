import { WebhookState } from '@platform/shared';
import { createTestDatabase, seedParty, seedRegistration, type TestDatabase } from '@platform/testkit';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  dropExpiredPartitions,
  ensurePartitions,
  listPartitions,
  PARTITION_LOCK_TIMEOUT_MS,
  type PartitionedTable,
} from './prune';
import { registrationBucket } from '../buckets';

const DAY = 86_400_000;
let db: TestDatabase;
let partyId: number;
let registrationId: number;
let eventId: number;

/** The UTC day `days` from now, `YYYY-MM-DD`. */
const dayFromNow = (days: number) => new Date(Date.now() + days * DAY).toISOString().slice(0, 10);
const partitionOf = (table: PartitionedTable, day: string) => `${table}_${day.replaceAll('-', '')}`;

async function partitionNames(table: PartitionedTable): Promise<string[]> {
  return (await listPartitions(db.knex, table)).filter((p) => p.state === 'attached').map((p) => p.name);
}

let serial = 0;
/**
 * Writes a change as it would have been written at `created`: into the partition of its UTC day
 * (made if missing), with an id of that day's range. Without `created`, now, through the sequence.
 */
async function change(created?: Date): Promise<{ id: number; partition: string }> {
  let id: number | undefined;
  if (created) {
    const day = created.toISOString().slice(0, 10);
    await ensurePartitions(db.knex, 'entity_changes', { day });
    const { rows } = await db.knex.raw(`select time_partition_start(?::date) + ? as id`, [day, ++serial]);
    id = Number(rows[0].id);
  }
  const { rows } = await db.knex.raw(
    `insert into entity_changes (id, entity_name, type, entity_id, entity, initiator_party_id, created)
     values (coalesce(?::bigint, nextval('entity_changes_id_seq')), 'Unit', 2, 1, '{}', ?, coalesce(?::timestamptz, now()))
     returning id, tableoid::regclass::text as partition`,
    [id ?? null, partyId, created ?? null],
  );
  return { id: Number(rows[0].id), partition: rows[0].partition };
}

async function webhook(changeId: number, state: WebhookState): Promise<number> {
  const [row] = await db
    .knex('webhooks')
    .insert({
      registration_id: registrationId,
      bucket: registrationBucket(db.knex, registrationId),
      event_id: eventId,
      entity_change_id: changeId,
      state,
    })
    .returning('id');
  return row.id;
}

beforeAll(async () => {
  db = await createTestDatabase();
  partyId = await seedParty(db.knex);
  const registration = await seedRegistration(db.knex, { partyId, targetUrl: 'http://127.0.0.1:9/hook' });
  registrationId = registration.id;
  eventId = registration.eventIds[0]!;
});
afterAll(() => db.drop());
beforeEach(async () => {
  await db.knex.raw('truncate webhook_attempts, webhooks, webhook_groups, entity_changes cascade');
});

describe('partitions ahead', () => {
  it('exist for today and the two days after it, made once, and new rows go to today’s', async () => {
    for (const table of ['entity_changes', 'webhook_attempts'] as const) {
      await ensurePartitions(db.knex, table);
      expect(await ensurePartitions(db.knex, table)).toEqual([]);
      expect(await partitionNames(table)).toEqual(
        expect.arrayContaining([0, 1, 2].map((days) => partitionOf(table, dayFromNow(days)))),
      );
    }
    expect((await change()).partition).toBe(partitionOf('entity_changes', dayFromNow(0)));
  });

  it('take a write dated beyond them, and the rows of a later day go to that day’s once it is made', async () => {
    await ensurePartitions(db.knex, 'entity_changes');
    // the write's date does not choose its partition: its id does, and the sequence stays in
    // today's range until a run on a later day moves it
    const late = await change();
    await db
      .knex('entity_changes')
      .where({ id: late.id })
      .update({ created: new Date(Date.now() + 10 * DAY) });
    expect(late.partition).toBe(partitionOf('entity_changes', dayFromNow(0)));

    // the job not run for five days, then run: that day's partitions are made and new rows go there
    expect(await ensurePartitions(db.knex, 'entity_changes', { day: dayFromNow(5) })).toEqual(
      [5, 6, 7].map((days) => partitionOf('entity_changes', dayFromNow(days))),
    );
    expect((await change()).partition).toBe(partitionOf('entity_changes', dayFromNow(5)));
    // a run for an earlier day does not move the sequence back
    await ensurePartitions(db.knex, 'entity_changes', { day: dayFromNow(0) });
    const next = await change();
    expect(next.partition).toBe(partitionOf('entity_changes', dayFromNow(5)));
    expect(next.id).toBeGreaterThan(late.id);
  });
});

describe('dropping expired partitions', () => {
  it('drops the days past the retention, keeps a day a webhook references and the days within it', async () => {
    const old = await change(new Date(Date.now() - 40 * DAY));
    const pinning = await change(new Date(Date.now() - 35 * DAY));
    const failed = await webhook(pinning.id, WebhookState.Failed);
    const recent = await change(new Date(Date.now() - 29 * DAY));
    await db.knex.raw('analyze entity_changes');

    const pruned = await dropExpiredPartitions(db.knex, 'entity_changes', { olderThanMs: 30 * DAY });
    expect(pruned.dropped).toContainEqual({ partition: old.partition, rows: 1 });
    expect(pruned.pinned).toEqual([{ partition: pinning.partition, webhooks: 1 }]);
    expect(pruned.busy).toEqual([]);
    const left = await partitionNames('entity_changes');
    expect(left).not.toContain(old.partition);
    expect(left).toEqual(expect.arrayContaining([pinning.partition, recent.partition]));
    expect(await db.knex('entity_changes').orderBy('id').pluck('id')).toEqual([pinning.id, recent.id]);

    // once nothing references it, it goes
    await db.knex('webhooks').where({ id: failed }).delete();
    expect(
      (await dropExpiredPartitions(db.knex, 'entity_changes', { olderThanMs: 30 * DAY })).dropped,
    ).toEqual([{ partition: pinning.partition, rows: 1 }]);
  });

  it('keeps a past day whose newest row is within the retention (the job did not move the sequence)', async () => {
    await ensurePartitions(db.knex, 'webhook_attempts', { day: dayFromNow(-40) });
    await db.knex.raw(
      `insert into webhook_attempts (id, webhook_id, number, started_at, duration_ms, created)
       values (time_partition_start(?::date) + 1, 1, 1, now(), 1, now() - interval '40 days'),
              (time_partition_start(?::date) + 2, 1, 2, now(), 1, now() - interval '1 day')`,
      [dayFromNow(-40), dayFromNow(-40)],
    );
    const partition = partitionOf('webhook_attempts', dayFromNow(-40));
    expect(
      (await dropExpiredPartitions(db.knex, 'webhook_attempts', { olderThanMs: 30 * DAY })).dropped,
    ).not.toContainEqual(expect.objectContaining({ partition }));
    expect(await partitionNames('webhook_attempts')).toContain(partition);
    expect(
      (await dropExpiredPartitions(db.knex, 'webhook_attempts', { olderThanMs: 0 })).dropped,
    ).toContainEqual(expect.objectContaining({ partition }));
  });

  it('gives up on a detach that waits for a lock, and drops it next run; finishes what a dead run left', async () => {
    const old = await change(new Date(Date.now() - 50 * DAY));
    // an open transaction that wrote a webhook: the detach's foreign key check waits for it
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query(
        `insert into webhooks (registration_id, bucket, event_id, entity_change_id, state)
         values ($1, (select bucket from webhook_registrations where id = $1), $2, $3, $4)`,
        [registrationId, eventId, (await change()).id, WebhookState.Created],
      );
      const started = Date.now();
      const pruned = await dropExpiredPartitions(db.knex, 'entity_changes', { olderThanMs: 30 * DAY });
      expect(pruned.busy).toContain(old.partition);
      expect(pruned.dropped).toEqual([]);
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(PARTITION_LOCK_TIMEOUT_MS);
      expect(await partitionNames('entity_changes')).toContain(old.partition);
    } finally {
      await blocker.query('rollback');
      await blocker.end();
    }
    expect(
      (await dropExpiredPartitions(db.knex, 'entity_changes', { olderThanMs: 30 * DAY })).dropped,
    ).toContainEqual(expect.objectContaining({ partition: old.partition }));

    // a run that died between detach and drop left a detached table of the partition's name
    const orphan = await change(new Date(Date.now() - 60 * DAY));
    await db.knex.raw('alter table entity_changes detach partition ??', [orphan.partition]);
    expect(await listPartitions(db.knex, 'entity_changes')).toContainEqual(
      expect.objectContaining({ name: orphan.partition, state: 'detached' }),
    );
    expect(
      (await dropExpiredPartitions(db.knex, 'entity_changes', { olderThanMs: 30 * DAY })).dropped,
    ).toContainEqual(expect.objectContaining({ partition: orphan.partition }));
    expect((await listPartitions(db.knex, 'entity_changes')).map((p) => p.name)).not.toContain(
      orphan.partition,
    );
  });
});
