import type { Knex } from 'knex';
import { SHARED_BUCKETS } from '../src/buckets';

/** Rows per backfill statement: each commits alone, so the queue's row locks stay short. */
const BATCH = 20_000;

/**
 * Step 2's end for the emulation's tables (docs/scaling.md › From one database to Citus): every
 * row carries its tenant's bucket and `bucket` is `NOT NULL`, so the hot statements can pin it
 * (step 4: `bucket = p_bucket`) without missing a row. The rows `20261203000000_tenant_bucket`
 * left without one (the old `webhooks` and `webhook_groups`) take their registration's, in
 * batches of `BATCH` ids, each its own transaction: the dispatcher keeps claiming and completing
 * around them (`transaction: false`). Then each column becomes `NOT NULL` through a `CHECK ...
 * NOT VALID`, validated under a lock that lets writes continue, so `SET NOT NULL` does not scan
 * the table again under its `ACCESS EXCLUSIVE` lock. Every step can run again after an
 * interruption. A writer of the release before `tenant_bucket` fails here on its inserts: that
 * release is finished (its processes stopped) before this one migrates.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  // an operation on one registration's webhooks walks them in its bucket
  await knex.raw(`alter table webhook_operations add column if not exists bucket int`);
  await knex.raw(`update webhook_operations o set bucket = r.bucket from webhook_registrations r
                   where r.id = o.registration_id and o.bucket is null`);
  await knex.raw(
    `update parties set bucket = coalesce(managed_by_party_id, id) % ${SHARED_BUCKETS} where bucket is null`,
  );
  for (const table of ['webhook_targets', 'webhook_registrations']) {
    await knex.raw(
      `update ?? x set bucket = p.bucket from parties p where p.id = x.party_id and x.bucket is null`,
      [table],
    );
  }
  await knex.raw(`update webhook_events e set bucket = r.bucket from webhook_registrations r
                   where r.id = e.registration_id and e.bucket is null`);
  await backfill(knex, 'webhook_groups', 'registration_id');
  await backfill(knex, 'webhooks', 'id');
  for (const table of [
    'parties',
    'webhook_targets',
    'webhook_registrations',
    'webhook_events',
    'webhook_groups',
    'webhooks',
  ]) {
    const check = `${table}_bucket_not_null`;
    await knex.raw(`alter table ?? drop constraint if exists ??`, [table, check]);
    await knex.raw(`alter table ?? add constraint ?? check (bucket is not null) not valid`, [table, check]);
    await knex.raw(`alter table ?? validate constraint ??`, [table, check]);
    await knex.raw(`alter table ?? alter column bucket set not null`, [table]);
    await knex.raw(`alter table ?? drop constraint ??`, [table, check]);
  }
}

/** Gives `table`'s rows without a bucket their registration's, `BATCH` values of `key` at a time. */
async function backfill(knex: Knex, table: string, key: string): Promise<void> {
  const { rows } = await knex.raw(`select min(??) as low, max(??) as high from ?? where bucket is null`, [
    key,
    key,
    table,
  ]);
  const { low, high } = rows[0] as { low: string | null; high: string | null };
  if (low === null || high === null) return;
  for (let from = BigInt(low); from <= BigInt(high); from += BigInt(BATCH)) {
    await knex.raw(
      `update ?? x set bucket = r.bucket from webhook_registrations r
        where r.id = x.registration_id and x.bucket is null and x.?? >= ? and x.?? < ?`,
      [table, key, String(from), key, String(from + BigInt(BATCH))],
    );
  }
}
