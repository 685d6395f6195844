import type { Knex } from 'knex';

/**
 * The full record of an attempt (docs/dispatcher.md › What an attempt records): the request as
 * sent (`request`: its URL and headers, credentials redacted) and the answer's headers
 * (`response_headers`, at most 2 KiB). Both null for an attempt that sent nothing (a skip) and for
 * attempts recorded before this. The request body is not stored: it is the webhook's own body,
 * rebuilt from the recorded change on read. Nullable without a default, so adding them to the
 * partitioned table rewrites nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table webhook_attempts add column request jsonb, add column response_headers jsonb`);
}
