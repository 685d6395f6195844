import type { Knex } from 'knex';
import {
  CLAIMABLE_WEBHOOK_STATES,
  WebhookState,
  type BreakerState,
  type WebhookDisabledReason,
  type WebhookRegistrationStatus,
} from '@platform/shared';
import { sqlList } from './sql';

/** The delivery figures of one window of a registration's health. */
export interface HealthWindowFigures {
  attempts: number;
  /** Attempts that sent no request (latency bucket -1: `ATTEMPT_KINDS_WITHOUT_REQUEST`). */
  skipped: number;
  successes: number;
  /** The median duration of the requests sent, as its latency bucket's upper bound (ms). */
  p50_ms: number | null;
  p95_ms: number | null;
}

/** What `registrationHealth` reads, one snapshot. */
export interface RegistrationHealthRow {
  id: number;
  status: WebhookRegistrationStatus;
  disabled_reason: WebhookDisabledReason | null;
  status_changed: Date | null;
  last_success_at: Date | null;
  failing_since: Date | null;
  /** Its endpoint (`webhook_targets`), whose breaker this is: id, normalised URL, origin. */
  endpoint_id: number;
  endpoint_url: string;
  origin: string;
  breaker_state: BreakerState;
  open_until: Date | null;
  consecutive_failures: number;
  last_hour: HealthWindowFigures;
  last_day: HealthWindowFigures;
  due_count: number;
  oldest_due_at: Date | null;
  in_flight: number;
}

const CLAIMABLE = sqlList(CLAIMABLE_WEBHOOK_STATES);

/**
 * A registration's health in one statement (docs/webhooks.md › Health, with its cost):
 * - its row and its endpoint's breaker;
 * - per window (the last hour, the last day) the sums of `webhook_attempt_stats` over the minutes
 *   in it, the attempts without a request (bucket -1) apart, and the p50 and p95 latency: the bucket where the running count of the requests sent
 *   (bucket >= 0; -1 is an attempt without a request) reaches 50 % / 95 %, answered as that
 *   bucket's upper bound 1.1^(b+1) - 1 ms (the bucket `webhooks_complete` writes), to 0.1 ms;
 * - its awaiting webhooks (Created, Retrying, Pending), read from the partial indexes
 *   `webhooks_claimable` and `webhooks_pending` only: their count, the oldest one's `created`,
 *   and those a dispatcher holds (leased: `locked_by` set and the lease not run out).
 * Undefined when no registration has that id (deleted ones are read: the caller scopes).
 */
export const REGISTRATION_HEALTH_SQL = `
  with buckets as (
    select bucket, sum(attempts) as day_attempts, sum(successes) as day_successes,
           coalesce(sum(attempts) filter (where minute >= now() - interval '1 hour'), 0) as hour_attempts,
           coalesce(sum(successes) filter (where minute >= now() - interval '1 hour'), 0) as hour_successes
      from webhook_attempt_stats
     where registration_id = :id and minute >= now() - interval '1 day'
     group by bucket
  ),
  running as (
    select w.name, b.bucket, w.attempts, w.successes,
           sum(case when b.bucket >= 0 then w.attempts else 0 end)
             over (partition by w.name order by b.bucket) as sent_upto,
           sum(case when b.bucket >= 0 then w.attempts else 0 end) over (partition by w.name) as sent
      from buckets b
     cross join lateral (values ('last_hour', b.hour_attempts, b.hour_successes),
                                ('last_day', b.day_attempts, b.day_successes)) as w(name, attempts, successes)
  ),
  figures as (
    select name, sum(attempts)::int as attempts, (sum(attempts) filter (where bucket < 0))::int as skipped,
           sum(successes)::int as successes,
           min(bucket) filter (where bucket >= 0 and attempts > 0 and sent_upto >= 0.50 * sent) as p50_bucket,
           min(bucket) filter (where bucket >= 0 and attempts > 0 and sent_upto >= 0.95 * sent) as p95_bucket
      from running
     group by name
  ),
  windowed as (
    select json_object_agg(w.name, json_build_object(
             'attempts', coalesce(f.attempts, 0),
             'skipped', coalesce(f.skipped, 0),
             'successes', coalesce(f.successes, 0),
             'p50_ms', round((power(1.1, f.p50_bucket + 1) - 1)::numeric, 1)::float8,
             'p95_ms', round((power(1.1, f.p95_bucket + 1) - 1)::numeric, 1)::float8)) as figures
      from (values ('last_hour'), ('last_day')) as w(name) left join figures f using (name)
  ),
  awaiting as (
    select count(*)::int as due_count, min(created) as oldest_due_at,
           (count(*) filter (where locked_by is not null and next_attempt_at > now()))::int as in_flight
      from (select created, locked_by, next_attempt_at from webhooks
             where registration_id = :id and state in (${CLAIMABLE})
            union all
            select created, null, null from webhooks
             where registration_id = :id and state = ${WebhookState.Pending}) a
  )
  select r.id, r.status, r.disabled_reason, r.status_changed, r.last_success_at, r.failing_since,
         t.id as endpoint_id, t.url as endpoint_url, t.origin, t.breaker_state, t.open_until, t.consecutive_failures,
         windowed.figures -> 'last_hour' as last_hour, windowed.figures -> 'last_day' as last_day,
         awaiting.due_count, awaiting.oldest_due_at, awaiting.in_flight
    from webhook_registrations r
    join webhook_targets t on t.id = r.target_id
   cross join windowed
   cross join awaiting
   where r.id = :id`;

/** Reads the health of registration `id` (see REGISTRATION_HEALTH_SQL); undefined when there is none. */
export async function registrationHealth(
  knex: Knex | Knex.Transaction,
  id: number,
): Promise<RegistrationHealthRow | undefined> {
  const { rows } = await knex.raw<{ rows: RegistrationHealthRow[] }>(REGISTRATION_HEALTH_SQL, { id });
  return rows[0];
}
