import type { Knex } from 'knex';

/**
 * What a receiver asked for and what an operator allows, per endpoint (docs/decisions.md ›
 * Delivery isolation): `webhook_targets.hold_until`, until when the endpoint's deliveries wait
 * because it answered 429 or 503 with `Retry-After` (null: not held), and
 * `webhook_registrations.rate_limit`, the most deliveries per second the registration may send
 * (null: no limit). `if not exists`: two branches add the same columns under this one name.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table webhook_targets add column if not exists hold_until timestamptz;
    alter table webhook_registrations add column if not exists rate_limit integer;
  `);
}
