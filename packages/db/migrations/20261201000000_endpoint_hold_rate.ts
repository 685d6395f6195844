import type { Knex } from 'knex';
import { WEBHOOK_TARGETS_RATE_LIMIT_FUNCTION } from '../src/queue/functions/webhook-targets-rate-limit';

/**
 * What a receiver asks of its endpoint (docs/dispatcher.md › Retry-After hold, › Rate limit):
 * - `webhook_targets.hold_until`: a 429 or 503 with `Retry-After` holds the whole endpoint until
 *   then; the claim gives it no room meanwhile.
 * - `webhook_registrations.rate_limit`: deliveries per second at most (null: unlimited), and on
 *   the endpoint the lowest of its live registrations' (`rate_limit`, kept by a trigger) with its
 *   token bucket (`rate_tokens` as of `rate_refilled_at`), which every replica's claim refills
 *   and spends under the row lock.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table webhook_targets
      add column hold_until timestamptz,
      add column rate_limit int,
      add column rate_tokens float8,
      add column rate_refilled_at timestamptz;
    alter table webhook_registrations
      add column rate_limit int constraint webhook_registrations_rate_limit_check check (rate_limit between 1 and 10000);
    -- the trigger's min() over an endpoint's registrations
    create index webhook_registrations_target on webhook_registrations (target_id) where deleted is null;
    -- the claim's bucket: only endpoints with a limit are read under lock, so one claim over
    -- thousands of endpoints without a limit probes this small index, not their rows
    create index webhook_targets_rate_limited on webhook_targets (id) where rate_limit is not null;
    -- the claim's next due time of held endpoints: endpoints that were never held are not read
    create index webhook_targets_held on webhook_targets (hold_until) where hold_until is not null;
  `);
  await knex.raw(WEBHOOK_TARGETS_RATE_LIMIT_FUNCTION);
  await knex.raw(`
    create trigger webhook_targets_rate_limit after insert or update of rate_limit, target_id, deleted
      on webhook_registrations for each row execute function webhook_targets_rate_limit();
  `);
}
