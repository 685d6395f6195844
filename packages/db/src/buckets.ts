import type { Knex } from 'knex';

/**
 * The tenant bucket (docs/scaling.md › Buckets, shards and the directory): every row of a tenant's
 * queue carries the bucket of its tenant, the distribution column it would have on Citus. A
 * tenant is the managing Property Management Company of a managed party and the party itself
 * otherwise; `parties.bucket` is the directory. This module holds the rules for setting it on
 * the rows a writer inserts itself (a party, a registration, its events); a registration's
 * endpoint takes the registration's (the trigger `webhook_registrations_target`), and a change's
 * webhooks and groups take their initiator's in `webhooks_enqueue`. A writer passes the bucket
 * with the row rather than leaving it to a trigger: on the partitioned layout a row is routed to
 * its partition by the bucket it is inserted with.
 */

/** The shared buckets: a tenant's party id modulo this (values from it up are exclusive buckets). */
export const SHARED_BUCKETS = 4096;

/**
 * The id and bucket a new party is written with (`insert` them with its other columns): a managed
 * party goes into its manager's bucket; any other party gets its id from the sequence now, so its
 * own bucket (`id % SHARED_BUCKETS`) is known before the row is written.
 */
export async function newPartyPlacement(
  trx: Knex | Knex.Transaction,
  managedByPartyId: number | null | undefined,
): Promise<{ id?: number; bucket: number }> {
  if (managedByPartyId !== null && managedByPartyId !== undefined) {
    const manager = (await trx('parties').where({ id: managedByPartyId }).first('bucket')) as
      { bucket: number } | undefined;
    // an unknown manager is the foreign key's to refuse, as without a bucket
    if (manager) return { bucket: manager.bucket };
  }
  const { rows } = await trx.raw<{ rows: { id: string }[] }>(`select nextval('parties_id_seq') as id`);
  const id = Number(rows[0]!.id);
  return { id, bucket: id % SHARED_BUCKETS };
}

/**
 * The `webhook_events` rows of a registration's subscriptions, in its bucket: every writer of a
 * registration's events (the API's create, the test seed, the demo) inserts these.
 */
export function registrationEventRows<T extends object>(
  registration: { id: number; bucket: number },
  events: readonly T[],
): (T & { registration_id: number; bucket: number })[] {
  return events.map((event) => ({ ...event, registration_id: registration.id, bucket: registration.bucket }));
}

/** The bucket of party `partyId`'s tenant, as a value of an insert: a new registration's. */
export function partyBucket(knex: Knex | Knex.Transaction, partyId: number): Knex.Raw {
  return knex.raw('(select bucket from parties where id = ?)', [partyId]);
}

/**
 * The bucket of registration `registrationId`, as a value of an insert: its events', groups' and
 * webhooks' (a tenant's queue rows share its bucket).
 */
export function registrationBucket(knex: Knex | Knex.Transaction, registrationId: number): Knex.Raw {
  return knex.raw('(select bucket from webhook_registrations where id = ?)', [registrationId]);
}
