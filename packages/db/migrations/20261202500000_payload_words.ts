import type { Knex } from 'knex';

/**
 * Search of webhooks by the words of their payload (docs/performance.md › Search): the trigram
 * index of `20261202100100_payload_search` cost the enqueue about a quarter of its rate and the
 * drain a sixth (a thousand trigrams per change, keys and numbers included), over the 10 %
 * budget. It is replaced by a full-text GIN index on the words of the entity's string values
 * only (`jsonb_to_tsvector` with `["string"]`: no keys, no numbers, no booleans), with the
 * `simple` configuration (no language, no stemming, no stop words: a word is found as written,
 * case-insensitive): a score of entries per change instead of a thousand. The search then finds
 * whole words and word prefixes (`to_tsquery('simple', 'word:*')`), not any substring. On the
 * partitioned parent, so every partition, today's and those `time_partitions_ensure` adds, has
 * its own. The pg_trgm extension stays: dropping it would fail wherever another object uses it,
 * and it costs nothing unused. Forward-only, as every migration here (`migrate.ts`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists entity_changes_payload_trgm');
  await knex.raw(
    `create index entity_changes_payload_words on entity_changes
       using gin (jsonb_to_tsvector('simple', entity, '["string"]'))`,
  );
}
