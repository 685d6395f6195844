import type { Knex } from 'knex';

/**
 * Search of webhooks by a string in their payload (docs/performance.md › Search): a trigram GIN
 * index on the text of each recorded change's entity, the body every webhook of the change
 * delivers, so `entity::text ilike '%…%'` (any substring, case-insensitive, from 3 characters)
 * is an index lookup instead of a scan of every change. pg_trgm ships with Postgres (contrib) and
 * is a trusted extension: the database owner may create it. Created on the partitioned parent,
 * so every partition, today's and those `time_partitions_ensure` adds, has its own.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists pg_trgm');
  await knex.raw(
    'create index entity_changes_payload_trgm on entity_changes using gin ((entity::text) gin_trgm_ops)',
  );
}
