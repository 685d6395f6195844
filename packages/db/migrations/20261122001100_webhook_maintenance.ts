import type { Knex } from 'knex';

/**
 * The repair sweep (docs/dispatcher.md#repair-sweep) asks, for each group with a Pending webhook, whether a head in
 * state Created or Retrying exists. Without this index that question scans every webhook of the
 * registration; with it, one probe. Only grouped rows in states 1 and 2 are in it, so it stays as
 * small as the number of live group heads and ungrouped traffic never touches it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `create index webhooks_group_heads on webhooks (registration_id, group_key)
      where state in (1, 2) and group_key is not null`,
  );
}
