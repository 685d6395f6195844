import type { Knex } from 'knex';

/**
 * The operator webhook API finds the webhooks of one entity (`GET /api/webhooks?entityName=…&entityId=…`,
 * the first question of most support cases); without this index that is a scan of every change.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index entity_changes_entity on entity_changes (entity_name, entity_id)`);
}
