import type { Knex } from 'knex';
import {
  CLAIMABLE_WEBHOOK_STATES,
  SHARED_WITH_SHOWN,
  WebhookState,
  type BreakerState,
  type WebhookDisabledReason,
  type WebhookRegistrationStatus,
} from '@platform/shared';
import { latencyBucketUpperMs, latencyPercentileBuckets, requestRunningCounts } from './latency-percentiles';
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
  /** The party whose endpoint it is (an endpoint is one party's normalised URL). */
  endpoint_party_id: number;
  breaker_state: BreakerState;
  open_until: Date | null;
  consecutive_failures: number;
  /** The endpoint's last success (to within 10 s) and last target failure, any registration's. */
  endpoint_last_success_at: Date | null;
  endpoint_last_failure_at: Date | null;
  /** Until when a `Retry-After` (on a 429 or 503) holds its endpoint; null when it is not held now. */
  hold_until: Date | null;
  /** The endpoint's rate limit in force (the lowest of its live registrations'); null: none. */
  rate_limit: number | null;
  /** The party's other live registrations on this endpoint, by id (at most SHARED_WITH_SHOWN). */
  shared_with: { id: number; status: WebhookRegistrationStatus }[];
  shared_with_count: number;
  last_hour: HealthWindowFigures;
  last_day: HealthWindowFigures;
  /** Awaiting webhooks, counted up to HEALTH_COUNT_CAP. */
  due_count: number;
  /** More than HEALTH_COUNT_CAP are awaiting: `due_count` is a lower bound. */
  due_count_capped: boolean;
  oldest_due_at: Date | null;
  in_flight: number;
}

const CLAIMABLE = sqlList(CLAIMABLE_WEBHOOK_STATES);
const AWAITING = sqlList([...CLAIMABLE_WEBHOOK_STATES, WebhookState.Pending]);

/**
 * How many awaiting webhooks the health read counts at most: beyond it the count says "at least
 * this many" (`due_count_capped`). Counting a million rows would cost the read 250 to 400 ms.
 */
export const HEALTH_COUNT_CAP = 10_000;

/**
 * A registration's health in one statement (docs/webhooks.md › Health, with its cost):
 * - its row, its endpoint's breaker, the endpoint's `Retry-After` hold and rate limit in force;
 * - the party's other live registrations on the same endpoint (same party, same normalised URL:
 *   one receiver, one breaker), one probe of the index `webhook_registrations_target`;
 * - per window (the last hour, the last day) the sums of `webhook_attempt_stats` over the minutes
 *   in it, the attempts without a request (bucket -1) apart, and the p50 and p95 latency: the bucket where the running count of the requests sent
 *   (bucket >= 0; -1 is an attempt without a request) reaches 50 % / 95 %, answered as that
 *   bucket's upper bound 1.1^(b+1) - 1 ms (the bucket `webhooks_complete` writes), to 0.1 ms;
 * - its awaiting webhooks (Created, Retrying, Pending), read from the partial index
 *   `webhooks_awaiting` (registration_id, id) only, each read bounded, so its cost does not grow
 *   with the backlog (docs/performance.md › The health read): their count up to
 *   HEALTH_COUNT_CAP (beyond it `due_count_capped`: "at least"), the oldest one's `created` (the
 *   index's first entry), and those a dispatcher holds (leased: `locked_by` set and the lease
 *   not run out; a lease lies in the future, so among the HEALTH_COUNT_CAP claimable rows due
 *   soonest after now, from `webhooks_claimable`).
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
           ${requestRunningCounts({ bucket: 'b.bucket', attempts: 'w.attempts', partition: 'w.name' })}
      from buckets b
     cross join lateral (values ('last_hour', b.hour_attempts, b.hour_successes),
                                ('last_day', b.day_attempts, b.day_successes)) as w(name, attempts, successes)
  ),
  figures as (
    select name, sum(attempts)::int as attempts, (sum(attempts) filter (where bucket < 0))::int as skipped,
           sum(successes)::int as successes, ${latencyPercentileBuckets}
      from running
     group by name
  ),
  windowed as (
    select json_object_agg(w.name, json_build_object(
             'attempts', coalesce(f.attempts, 0),
             'skipped', coalesce(f.skipped, 0),
             'successes', coalesce(f.successes, 0),
             'p50_ms', ${latencyBucketUpperMs('f.p50_bucket')},
             'p95_ms', ${latencyBucketUpperMs('f.p95_bucket')})) as figures
      from (values ('last_hour'), ('last_day')) as w(name) left join figures f using (name)
  ),
  awaiting as materialized (
    select (select count(*) from (
              select 1 from webhooks
               where registration_id = :id and state in (${AWAITING})
               order by id
               limit ${HEALTH_COUNT_CAP} + 1) c)::int as awaiting,
           (select created from webhooks
             where registration_id = :id and state in (${AWAITING})
             order by id limit 1) as oldest_due_at,
           (select count(*) filter (where locked_by is not null) from (
              select locked_by from webhooks
               where registration_id = :id and state in (${CLAIMABLE}) and next_attempt_at > now()
               order by next_attempt_at limit ${HEALTH_COUNT_CAP}) l)::int as in_flight
  )
  select r.id, r.status, r.disabled_reason, r.status_changed, r.last_success_at, r.failing_since,
         t.id as endpoint_id, t.url as endpoint_url, t.origin, t.party_id as endpoint_party_id,
         t.breaker_state, t.open_until, t.consecutive_failures,
         t.last_success_at as endpoint_last_success_at, t.last_failure_at as endpoint_last_failure_at,
         case when t.hold_until > now() then t.hold_until end as hold_until, t.rate_limit, shared.shared_with, shared.shared_with_count,
         windowed.figures -> 'last_hour' as last_hour, windowed.figures -> 'last_day' as last_day,
         least(awaiting.awaiting, ${HEALTH_COUNT_CAP}) as due_count,
         awaiting.awaiting > ${HEALTH_COUNT_CAP} as due_count_capped,
         awaiting.oldest_due_at, awaiting.in_flight
    from webhook_registrations r
    join webhook_targets t on t.id = r.target_id
   cross join windowed
   cross join awaiting
   cross join lateral (
     select coalesce(json_agg(json_build_object('id', o.id, 'status', o.status) order by o.id)
                       filter (where o.rank <= ${SHARED_WITH_SHOWN}), '[]') as shared_with,
            count(o.id)::int as shared_with_count
       from (select o.id, o.status, row_number() over (order by o.id) as rank
               from webhook_registrations o
              where o.party_id = r.party_id and o.target_id = r.target_id
                and o.id <> r.id and o.deleted is null) o) shared
   where r.id = :id`;

/** Reads the health of registration `id` (see REGISTRATION_HEALTH_SQL); undefined when there is none. */
export async function registrationHealth(
  knex: Knex | Knex.Transaction,
  id: number,
): Promise<RegistrationHealthRow | undefined> {
  const { rows } = await knex.raw<{ rows: RegistrationHealthRow[] }>(REGISTRATION_HEALTH_SQL, { id });
  return rows[0];
}
