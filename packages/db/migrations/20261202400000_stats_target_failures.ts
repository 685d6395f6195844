import type { Knex } from 'knex';

/**
 * The time series (`GET /api/webhook-stats/series`, docs/admin.md › Deliveries over time) splits
 * failed requests by kind: `target_failures` counts, per registration, minute and latency
 * bucket, the requests that failed on the target's side (a 5xx, a timeout, a connection or TLS
 * error: the `target-failure` outcome); the other failed requests (a 4xx, a redirect) are
 * attempts − successes − target_failures of the buckets ≥ 0.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table webhook_attempt_stats add column target_failures int not null default 0`);
}
