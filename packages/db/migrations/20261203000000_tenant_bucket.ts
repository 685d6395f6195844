import type { Knex } from 'knex';
import { SHARED_BUCKETS } from '../src/buckets';

/**
 * The tenant bucket, steps 1 and 2 of docs/scaling.md › From one database to Citus, for the
 * directory and the queue tables of the emulation's layout: `parties.bucket` (the directory: a
 * managed party shares its manager's bucket, any other party has `id % 4096`), and `bucket` on
 * `webhook_targets`, `webhook_registrations`, `webhook_events`, `webhook_groups` and `webhooks`,
 * each row in its tenant's bucket. Every write sets it from now on (`src/buckets.ts`, the
 * registration trigger, `webhooks_enqueue`); the small tables are backfilled here. The old rows
 * of `webhooks` and `webhook_groups` keep a null bucket: a backfill of millions of rows in one
 * statement would rewrite the queue's hottest table under one lock, so it runs in batches before
 * the tables are distributed (step 9), and `NOT NULL` follows it. Nothing on one database reads
 * the bucket yet. Keys and the statements' bucket filters come with steps 2 and 4.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table parties add column bucket int check (bucket >= 0)`);
  await knex.raw(`update parties set bucket = coalesce(managed_by_party_id, id) % ${SHARED_BUCKETS}`);
  for (const table of ['webhook_targets', 'webhook_registrations']) {
    await knex.raw(`alter table ?? add column bucket int`, [table]);
    await knex.raw(`update ?? x set bucket = p.bucket from parties p where p.id = x.party_id`, [table]);
  }
  await knex.raw(`alter table webhook_events add column bucket int`);
  await knex.raw(
    `update webhook_events e set bucket = r.bucket from webhook_registrations r where r.id = e.registration_id`,
  );
  for (const table of ['webhook_groups', 'webhooks']) {
    await knex.raw(`alter table ?? add column bucket int`, [table]);
  }
}
