import type { Knex } from 'knex';

/**
 * The health read at any backlog (docs/webhooks.md › Health, docs/performance.md › The health
 * read): a registration's awaiting webhooks (Created, Retrying, Pending) in id order, so its
 * oldest is the index's first entry and its count a bounded index range, instead of a count of
 * every awaiting row (250 to 400 ms at a million). Partial: a delivered or failed webhook leaves it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index webhooks_awaiting on webhooks (registration_id, id) where state in (1, 2, 6)`);
}
