import type { Knex } from 'knex';
import { CLAIMABLE_WEBHOOK_STATES } from '@platform/shared';
import { prepared } from './prepared';
import { arrays, sqlList } from './sql';

/**
 * A claimed webhook with everything one delivery needs, as `webhook_deliveries`
 * (`functions/webhook-deliveries.ts`) answers it: JSON, so its times are ISO strings.
 */
export interface ClaimedWebhook {
  id: number;
  registration_id: number;
  /**
   * The endpoint it goes to (a `webhook_targets` row: its party's normalised URL): the unit of
   * fair scheduling, the adaptive limit and the breaker.
   */
  target_id: number;
  /** The endpoint's origin (scheme, host, port): what the per-host cap counts. */
  origin: string;
  /** The attempt this delivery is (attempt_count after the claim). */
  attempt: number;
  group_key: string | null;
  target_url: string;
  auth_type: number;
  auth_credentials: string | null;
  signing_secret: string;
  /** The secret a rotation replaced, while its overlap lasts (sealed); null otherwise. */
  previous_signing_secret: string | null;
  registration_party_id: number;
  should_group_continue_after_fail: boolean;
  /** The registration was deleted after this webhook was written: the claim aborted it, do not deliver. */
  registration_deleted: boolean;
  /**
   * Its previous lease ran out without a result (the dispatcher holding it died or stopped
   * mid-try): `attempt` is that try, counted then; record it as `interrupted`, do not deliver.
   */
  interrupted: boolean;
  entity: unknown;
  initiator_party_id: number;
  initiator_account_id: number | null;
  event_id: number;
  event_type: number;
  event_entity_name: string;
  event_created: string;
  event_last_modified: string | null;
  event_deleted: string | null;
  /** The W3C trace context of the request that wrote it (tracing on), else null. */
  trace_context: { traceparent: string; tracestate?: string } | null;
}

/** What one claim took, and what the loop needs to know to claim again at the right time. */
export interface Claim {
  leased: ClaimedWebhook[];
  /** Endpoints whose breaker is open: record their webhooks as `circuit-open`, send nothing. */
  openTargets: number[];
  /** A registration had more due work than its share of this batch: claim again at once. */
  more: boolean;
  /** Endpoints that may have more due work than the room they were given: claim again when a slot frees. */
  cappedTargets: number[];
  /** When the claim came back short: the earliest moment more work falls due (null: none known). */
  nextDueAt: Date | null;
}

export interface ClaimOptions {
  batch: number;
  leaseMs: number;
  dispatcherId: string;
  /** Per endpoint the dispatcher knows: how many more of its webhooks it may take now. */
  rooms: ReadonlyMap<number, number>;
  /** The room of an endpoint the dispatcher holds nothing of. */
  defaultRoom: number;
  /** Per endpoint of `rooms`: how many of its webhooks the dispatcher holds (in flight and buffered). */
  held?: ReadonlyMap<number, number>;
  /**
   * What the endpoints of one origin may hold together in this dispatcher (twice
   * DISPATCHER_MAX_PER_HOST: in flight and buffered), shared evenly among those with due work;
   * none: no per-host cap.
   */
  hostRoom?: number;
}

const CLAIMABLE = sqlList(CLAIMABLE_WEBHOOK_STATES);

/**
 * The fair claim (docs/dispatcher.md › Scheduling). Bindings: batch, lease ms, dispatcher id,
 * host room, the default room, endpoint ids, their rooms, what the dispatcher holds of each.
 * A "target" here is an endpoint (`webhook_targets`: one party's normalised URL).
 *
 * 1. `regs` walks `webhooks_claimable` (registration_id, next_attempt_at) one registration at a
 *    time (a loose index scan: one probe per registration with claimable rows, however many rows
 *    each holds); `eligible` keeps the active ones (and deleted ones, whose rows the lease aborts)
 *    with their earliest row.
 * 2. `trials`: an endpoint whose breaker cool-down is over (or whose trial's lease ran out, or
 *    that an operator half-opened) and has due work goes half-open, and this claim may send its
 *    one trial. The update's row lock makes one replica win it.
 * 3. `rooms`: per registration, how many rows its endpoint may take: its room in this
 *    dispatcher; 1 for a trial; 0 while another trial is in flight; a whole batch while open
 *    (those are recorded `circuit-open` without a request and need no slot). `sized` holds each
 *    endpoint to its part of its origin's room (the per-host cap): the host room split evenly
 *    among the origin's endpoints with due work and room, less what the dispatcher already holds
 *    of it, so one endpoint's backlog cannot fill the host while another endpoint of it waits.
 *    An endpoint held by a `Retry-After` (`hold_until`) gets no room, no trial and no
 *    `circuit-open` attempts until then. A rate-limited endpoint (`rate_limit`, the lowest of its
 *    live registrations') gets at most the whole tokens of its bucket (`bucket`): read under the
 *    row lock, refilled at `rate_limit` per second since `rate_refilled_at` up to a quarter
 *    second's worth (at least 1), and `spent` by what `chosen` took of it in the same statement,
 *    so replicas take turns on the row and together never exceed the rate. `paced` endpoints
 *    (held, or stopped by their tokens) are not reported as capped: `next_due` says when their
 *    hold ends or their next token is there.
 * 4. `picked` takes each registration's due rows in order, within its endpoint's room and its
 *    share of the batch (batch / registrations with room, so a claim over a thousand
 *    registrations locks about a batch of rows, not a thousand rooms), an index range each,
 *    `skip locked`; `chosen` interleaves the endpoints: every endpoint's first row, then every
 *    endpoint's second, … up to the batch. Group order holds: only heads are claimable. When a
 *    share, not a room, stopped a registration, `more` says so: the loop claims again at once.
 */
export const CLAIM_SQL = `with recursive regs(id) as (
  (select registration_id from webhooks where state in (${CLAIMABLE}) order by registration_id limit 1)
  union all
  select (select w.registration_id from webhooks w
           where w.state in (${CLAIMABLE}) and w.registration_id > regs.id
           order by w.registration_id limit 1)
    from regs where regs.id is not null
),
eligible as (
  select r.id, r.target_id, f.first_due
    from regs
    join webhook_registrations r on r.id = regs.id
   cross join lateral (
     select w.next_attempt_at as first_due from webhooks w
      where w.registration_id = r.id and w.state in (${CLAIMABLE})
      order by w.next_attempt_at limit 1) f
   where r.status = 'active' or r.deleted is not null
),
params as (select ?::int as batch, ?::float8 as lease_ms, ?::text as dispatcher_id, ?::int as host_room),
trials as (
  update webhook_targets t
     set breaker_state = 'half-open', state_changed = now(),
         trial_until = now() + make_interval(secs => (select lease_ms from params) / 1000.0)
   where t.id in (select target_id from eligible where first_due <= now())
     and (t.hold_until is null or t.hold_until <= now())
     and ((t.breaker_state = 'open' and t.open_until <= now())
          or (t.breaker_state = 'half-open' and (t.trial_until is null or t.trial_until <= now())))
  returning t.id
),
bucket as materialized (
  select t.id, t.rate_limit,
         least(greatest(ceil(t.rate_limit / 4.0), 1),
               coalesce(t.rate_tokens, greatest(ceil(t.rate_limit / 4.0), 1))
                 + greatest(extract(epoch from now() - coalesce(t.rate_refilled_at, now())), 0) * t.rate_limit)
           as tokens,
         greatest(now(), coalesce(t.rate_refilled_at, now())) as refilled_at
    from webhook_targets t
   where t.id in (select target_id from eligible where first_due <= now())
     and t.rate_limit is not null and t.breaker_state = 'closed'
     and (t.hold_until is null or t.hold_until <= now())
   order by t.id
     for no key update
),
rooms as (
  select e.id as registration_id, e.target_id, t.origin, coalesce(c.held, 0) as held,
         tr.id is not null as trial,
         case when t.hold_until > now() then 0
              when tr.id is not null then 1
              when t.breaker_state = 'open' and t.open_until > now() then (select batch from params)
              when t.breaker_state <> 'closed' then 0
              else least(greatest(coalesce(c.room, ?::int), 0), floor(b.tokens)::int) end as endpoint_room,
         tr.id is null and t.breaker_state = 'open' and t.open_until > now()
           and not coalesce(t.hold_until > now(), false) as circuit_open,
         coalesce(t.hold_until > now(), false) as on_hold,
         floor(b.tokens)::int as tokens
    from eligible e
    join webhook_targets t on t.id = e.target_id
    left join trials tr on tr.id = e.target_id
    left join bucket b on b.id = e.target_id
    left join unnest(?::int[], ?::int[], ?::int[]) as c(target_id, room, held) on c.target_id = e.target_id
   where e.first_due <= now()
),
hosts as (
  select origin, count(distinct target_id) as endpoints
    from rooms
   where endpoint_room > 0 and not circuit_open and not trial
   group by origin
),
sized as (
  select r.registration_id, r.target_id, r.circuit_open,
         r.on_hold or (r.tokens is not null and r.tokens <= r.endpoint_room) as paced,
         case when r.circuit_open or r.trial or (select host_room from params) is null then r.endpoint_room
              else least(r.endpoint_room,
                         greatest(ceil((select host_room from params)::numeric / h.endpoints)::int - r.held, 0))
         end as room
    from rooms r
    left join hosts h on h.origin = r.origin
),
shares as (
  select r.*,
         least(r.room, (select batch from params),
               ceil((select batch from params)::numeric
                    / greatest(count(*) filter (where r.room > 0) over (), 1))::int) as take
    from sized r
),
picked as (
  select w.id, r.registration_id, r.target_id, r.room, r.take, r.circuit_open, w.next_attempt_at,
         row_number() over (partition by r.target_id order by w.next_attempt_at) as rn,
         count(*) over (partition by r.registration_id) as n_reg
    from shares r
   cross join lateral (
     select w.id, w.next_attempt_at from webhooks w
      where w.registration_id = r.registration_id and w.state in (${CLAIMABLE}) and w.next_attempt_at <= now()
      order by w.next_attempt_at
      limit r.take
        for update skip locked) w
   where r.take > 0
),
chosen as (
  select id, target_id, circuit_open from picked
   where rn <= room
   order by rn, next_attempt_at
   limit (select batch from params)
),
spent as (
  update webhook_targets t
     set rate_tokens = b.tokens - (select count(*) from chosen c where c.target_id = b.id),
         rate_refilled_at = b.refilled_at
    from bucket b
   where t.id = b.id
  returning t.id, t.rate_tokens, b.rate_limit
)
select webhooks_lease(array(select id from chosen), (select dispatcher_id from params),
                      (select lease_ms from params)) as leased,
       array(select distinct target_id from chosen where circuit_open) as open_targets,
       exists (select 1 from picked p
                where p.take < least(p.room, (select batch from params)) and p.n_reg >= p.take) as more,
       array(select distinct r.target_id from sized r
              where not r.circuit_open and not r.paced
                and r.room <= (select count(*) from chosen c where c.target_id = r.target_id)) as capped_targets,
       case when (select count(*) from chosen) < (select batch from params) then least(
         (select min(f.next_attempt_at) from eligible e
           cross join lateral (
             select w.next_attempt_at from webhooks w
              where w.registration_id = e.id and w.state in (${CLAIMABLE}) and w.next_attempt_at > now()
              order by w.next_attempt_at limit 1) f),
         (select min(t.trial_until) from webhook_targets t
           where t.id in (select target_id from eligible) and t.breaker_state = 'half-open'
             and t.trial_until > now()),
         (select min(t.open_until) from webhook_targets t
           where t.id in (select target_id from eligible) and t.breaker_state = 'open'
             and t.open_until > now()),
         (select min(t.hold_until) from webhook_targets t
           where t.id in (select target_id from eligible) and t.hold_until > now()),
         (select min(now() + make_interval(secs => (1 - s.rate_tokens) / s.rate_limit))
            from spent s where s.rate_tokens < 1))
       end as next_due`;

/** The bindings of `CLAIM_SQL`, in order. */
export function claimBindings(options: ClaimOptions): Knex.RawBinding[] {
  return arrays([
    options.batch,
    options.leaseMs,
    options.dispatcherId,
    options.hostRoom ?? null,
    options.defaultRoom,
    [...options.rooms.keys()],
    [...options.rooms.values()],
    [...options.rooms.keys()].map((target) => options.held?.get(target) ?? 0),
  ]);
}

/**
 * Claims up to `batch` due webhooks in one statement, fairly across endpoints (`CLAIM_SQL`), and
 * leases them (`webhooks_lease`) by pushing `next_attempt_at` to now + lease. A dispatcher that
 * dies loses its lease and the rows become due again; the next claim records the lost try as
 * `interrupted`. Also answers which endpoints' breakers are open, which endpoints may have more
 * work than their room, and (when short) when more work falls due, so the loop needs no second
 * query to know how long to sleep.
 */
export async function claimWebhooks(knex: Knex, options: ClaimOptions): Promise<Claim> {
  const { rows } = await knex
    .raw<{
      rows: {
        leased: ClaimedWebhook[];
        open_targets: number[];
        more: boolean;
        capped_targets: number[];
        next_due: Date | null;
      }[];
    }>(CLAIM_SQL, claimBindings(options))
    .options(prepared('webhooks-claim'));
  const row = rows[0]!;
  return {
    leased: row.leased,
    openTargets: row.open_targets,
    more: row.more,
    cappedTargets: row.capped_targets,
    nextDueAt: row.next_due,
  };
}
