import type { Knex } from 'knex';
import { WEBHOOK_TARGET_ORIGIN_FUNCTION } from '../src/queue/functions/webhook-target-origin';

/**
 * Delivery isolation (docs/dispatcher.md › Scheduling, limits and the breaker):
 *
 * - `webhook_targets`: one row per origin (scheme, host, port) a registration points at, with
 *   that target's circuit breaker, shared by every dispatcher replica. A trigger keeps each
 *   registration's `target_id` in step with its URL, whoever writes it.
 * - A registration's delivery `status` (`active`, `paused`, `disabled`), why it was disabled, and
 *   the running figures that decide a `failing` disable.
 * - `webhook_attempt_stats`: attempts per registration, minute and latency bucket, so a
 *   registration's health reads at most a day of minutes, never the attempts themselves.
 * - `webhooks_claimable`: the claimable rows per registration in due order, which the fair claim
 *   walks (one probe per registration with claimable rows, then a bounded range per eligible one).
 * - The queue functions learn targets, outcomes and interrupted tries (they live in
 *   `packages/db/src/queue/functions/`, written by every migrate).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table webhook_targets (
      id serial primary key,
      origin text not null unique,
      breaker_state text not null default 'closed' check (breaker_state in ('closed', 'open', 'half-open')),
      -- target failures (timeouts, connection errors, 5xx) since the last success
      consecutive_failures int not null default 0,
      -- opens since the last success: the cool-down doubles with each
      opens int not null default 0,
      -- while open: when a trial may be sent
      open_until timestamptz,
      -- while half-open: the end of the trial's lease (null: a trial may be sent now)
      trial_until timestamptz,
      last_success_at timestamptz,
      last_failure_at timestamptz,
      state_changed timestamptz not null default now()
    );
  `);
  // the backfill below needs it
  await knex.raw(WEBHOOK_TARGET_ORIGIN_FUNCTION);
  await knex.raw(`
    alter table webhook_registrations
      add column target_id int references webhook_targets,
      add column status text not null default 'active' check (status in ('active', 'paused', 'disabled')),
      add column disabled_reason text check (disabled_reason in ('gone', 'failing')),
      add column status_changed timestamptz,
      add column last_success_at timestamptz,
      -- the first failed attempt since the last success, and how many failed since
      add column failing_since timestamptz,
      add column failures_since_success int not null default 0;

    -- the registrations already written get their target here; the trigger that keeps it for
    -- later writes is created by 20261130000000_endpoint_isolation, from today's definition
    insert into webhook_targets (origin)
    select distinct webhook_target_origin(target_url) from webhook_registrations
        on conflict (origin) do nothing;
    update webhook_registrations r set target_id = t.id
      from webhook_targets t
     where t.origin = webhook_target_origin(r.target_url);
    alter table webhook_registrations alter column target_id set not null;

    create table webhook_attempt_stats (
      registration_id int not null references webhook_registrations,
      minute timestamptz not null,
      -- latency bucket b holds durations in [1.1^b - 1, 1.1^(b+1) - 1) ms; -1: no request was sent
      bucket smallint not null,
      attempts int not null,
      successes int not null,
      primary key (registration_id, minute, bucket)
    );
    -- the prune job deletes minutes older than the health reads (pruneAttemptStats)
    create index webhook_attempt_stats_minute on webhook_attempt_stats (minute);

    create index webhooks_claimable on webhooks (registration_id, next_attempt_at) where state in (1, 2);
  `);
}
