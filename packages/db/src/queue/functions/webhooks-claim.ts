import { CLAIMABLE_WEBHOOK_STATES } from '@platform/shared';
import { sqlList, GENERIC_PLANS, inBuckets } from '../sql';

const CLAIMABLE = sqlList(CLAIMABLE_WEBHOOK_STATES);

/**
 * The claim's inputs and their types, in the order of `webhooks_claim`'s parameters (each `p_` and
 * its name), which are also `CLAIM_PICK_SQL`'s named bindings: the cursor (`after`), the batch,
 * the endpoints the dispatcher has no room for, the lease, the dispatcher, the host room, the
 * default room, and per endpoint the dispatcher knows: its room and what it holds of it.
 */
export const CLAIM_PARAMETERS = {
  after: 'int',
  batch: 'int',
  roomless: 'int[]',
  lease_ms: 'float8',
  dispatcher_id: 'text',
  host_room: 'int',
  default_room: 'int',
  room_targets: 'int[]',
  rooms: 'int[]',
  held: 'int[]',
  buckets: 'int[]',
} as const;

export type ClaimParameter = keyof typeof CLAIM_PARAMETERS;

/** `CLAIM_PARAMETERS`' names, in order. */
export const CLAIM_PARAMETER_NAMES = Object.keys(CLAIM_PARAMETERS) as ClaimParameter[];

/**
 * How far one claim's walk may go, per row of its batch: registrations visited that cannot give it
 * work (paused, disabled, only future rows, an endpoint without room) count too, so a thousand
 * paused registrations cost a claim at most `VISITS_PER_ROW × batch` visits (512 for a batch of
 * 64: about 5 ms), never all of them. Larger, a claim could take longer; smaller, a lap over many
 * registrations in back-off would take more claims (each with its fixed cost) before the loop
 * learns when work next falls due.
 */
const VISITS_PER_ROW = 8;

/**
 * One step of the walk: the registration `n.id` visited, its endpoint, its earliest claimable row,
 * whether it is `live` (active, or deleted: its rows are aborted by the lease) and whether it
 * `counts` towards the batch's registrations: live, with a row due now, and its endpoint not one
 * the dispatcher has no room for (`cursor.roomless`).
 */
const visit = (
  group: (alias: string) => string,
) => `select r.target_id, f.first_due, r.id is not null as live,
         coalesce(f.first_due <= now() and r.target_id <> all(c.roomless), false) as counts
    from (select n.id) k
    left join webhook_registrations r
      on ${group('r')} and r.id = k.id and (r.status = 'active' or r.deleted is not null)
    left join lateral (
      select w.next_attempt_at as first_due from webhooks w
       where ${group('w')} and w.registration_id = r.id and w.state in (${CLAIMABLE})
       order by w.next_attempt_at limit 1) f on true`;

/**
 * The claim's first step, the statement that picks its rows (docs/dispatcher.md › Scheduling),
 * with each input written as `input(name)`: a PL/pgSQL parameter in `webhooks_claim`, a named
 * binding in `CLAIM_PICK_SQL`. It leases nothing: it answers the rows it chose and locked, in the
 * claim's order (`chosen`), those of them an open breaker's (`bare`), and what the loop needs.
 * A "target" here is an endpoint (`webhook_targets`: one party's normalised URL).
 *
 * 1. `walk` is a round-robin cursor over registrations: from the one after `after` (where the
 *    previous claim's walk ended), it steps through `webhooks_claimable` (registration_id,
 *    next_attempt_at) one registration at a time (one probe to the next registration with
 *    claimable rows, wrapping around past the highest id, and one for its earliest row), and stops
 *    at the first of: `batch` registrations that `count` (live, a row due now, an endpoint with
 *    room), VISITS_PER_ROW × batch visits, or back at its start (a whole lap: `lap.done`). So a
 *    claim visits O(batch) registrations, however many have due work. (The probes order by
 *    next_attempt_at too, which only `webhooks_claimable` answers without a sort, so the planner
 *    never walks `webhooks_awaiting`, where a grouped registration's Pending rows would sit.)
 *    `eligible` keeps the live ones (active, and deleted ones, whose rows the lease aborts) with
 *    their earliest row; the claim answers where the walk ended (`cursor`) for the next claim to
 *    start after.
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
 *    share, not a room, stopped a registration, `more` says so: the loop claims again at once;
 *    so it does when the claim came back short from a walk that stopped before a whole lap.
 *    `next_due` is answered only for a claim that came back short after a whole lap.
 *
 * Its two `UPDATE` CTEs (`trials`, `spent`) stay in it: they read what the walk found and what
 * `chosen` took, in the same snapshot, and Citus routes such a statement whole once every table it
 * reads is filtered to one shard (R5, docs/scaling.md). No name in it may be a PL/pgSQL variable's
 * (the walk's `counted` is not `found`): Postgres refuses such a column reference as ambiguous.
 */
const pickStatement = (input: (name: ClaimParameter) => string) => {
  // every table of the statement read in the caller's shard group (R2)
  const group = (alias: string) => inBuckets(alias, input('buckets'));
  return `with recursive cursor as (
  select ${input('after')} as after, ${input('batch')} as batch, ${input('roomless')} as roomless
),
walk(id, lap, visited, counted, target_id, first_due, live) as (
  select n.id, n.lap, 1, s.counts::int, s.target_id, s.first_due, s.live
    from cursor c
   cross join lateral (
     select x.id, x.lap from (
       (select w.registration_id as id, 0 as lap from webhooks w
         where ${group('w')} and w.state in (${CLAIMABLE}) and w.registration_id > c.after
         order by w.registration_id, w.next_attempt_at limit 1)
       union all
       (select w.registration_id, 1 from webhooks w
         where ${group('w')} and w.state in (${CLAIMABLE})
         order by w.registration_id, w.next_attempt_at limit 1)) x
      where x.lap = 0 or x.id <= c.after
      limit 1) n
   cross join lateral (${visit(group)}) s
  union all
  select n.id, n.lap, walk.visited + 1, walk.counted + s.counts::int, s.target_id, s.first_due, s.live
    from walk
   cross join cursor c
   cross join lateral (
     select x.id, x.lap from (
       (select w.registration_id as id, walk.lap as lap from webhooks w
         where ${group('w')} and w.state in (${CLAIMABLE}) and w.registration_id > walk.id
         order by w.registration_id, w.next_attempt_at limit 1)
       union all
       (select w.registration_id, 1 from webhooks w
         where ${group('w')} and w.state in (${CLAIMABLE}) and walk.lap = 0
         order by w.registration_id, w.next_attempt_at limit 1)) x
      where x.lap = 0 or x.id <= c.after
      limit 1) n
   cross join lateral (${visit(group)}) s
   where walk.counted < c.batch and walk.visited < ${VISITS_PER_ROW} * c.batch
),
lap as (
  select coalesce((select id from walk order by visited desc limit 1), (select after from cursor)) as cursor,
         exists (select 1 from walk where lap = 1) as wrapped,
         coalesce((select max(counted) from walk), 0) < (select batch from cursor)
           and coalesce((select max(visited) from walk), 0) < ${VISITS_PER_ROW} * (select batch from cursor) as done
),
eligible as (
  select id, target_id, first_due from walk where live
),
params as (select ${input('batch')} as batch, ${input('lease_ms')} as lease_ms,
                  ${input('dispatcher_id')} as dispatcher_id, ${input('host_room')} as host_room),
trials as (
  update webhook_targets t
     set breaker_state = 'half-open', state_changed = now(),
         trial_until = now() + make_interval(secs => (select lease_ms from params) / 1000.0)
   where ${group('t')} and t.id in (select target_id from eligible where first_due <= now())
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
   where ${group('t')} and t.id in (select target_id from eligible where first_due <= now())
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
              else least(greatest(coalesce(c.room, ${input('default_room')}), 0), floor(b.tokens)::int) end as endpoint_room,
         tr.id is null and t.breaker_state = 'open' and t.open_until > now()
           and not coalesce(t.hold_until > now(), false) as circuit_open,
         coalesce(t.hold_until > now(), false) as on_hold,
         floor(b.tokens)::int as tokens
    from eligible e
    join webhook_targets t on ${group('t')} and t.id = e.target_id
    left join trials tr on tr.id = e.target_id
    left join bucket b on b.id = e.target_id
    left join unnest(${input('room_targets')}, ${input('rooms')}, ${input('held')}) as c(target_id, room, held)
      on c.target_id = e.target_id
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
      where ${group('w')} and w.registration_id = r.registration_id and w.state in (${CLAIMABLE})
        and w.next_attempt_at <= now()
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
   where ${group('t')} and t.id = b.id
  returning t.id, t.rate_tokens, b.rate_limit
)
select array(select id from chosen) as chosen,
       array(select id from chosen where circuit_open) as bare,
       array(select distinct target_id from chosen where circuit_open) as open_targets,
       exists (select 1 from picked p
                where p.take < least(p.room, (select batch from params)) and p.n_reg >= p.take)
         or (not (select done from lap) and (select count(*) from chosen) < (select batch from params)) as more,
       array(select distinct r.target_id from sized r
               join rooms o using (registration_id)
               join webhook_targets t on ${group('t')} and t.id = r.target_id
              where not r.circuit_open and not r.paced and (t.breaker_state = 'closed' or o.trial)
                and r.room <= (select count(*) from chosen c where c.target_id = r.target_id)) as capped_targets,
       case when (select count(*) from chosen) < (select batch from params) and (select done from lap) then least(
         (select min(f.next_attempt_at) from eligible e
           cross join lateral (
             select w.next_attempt_at from webhooks w
              where ${group('w')} and w.registration_id = e.id and w.state in (${CLAIMABLE})
                and w.next_attempt_at > now()
              order by w.next_attempt_at limit 1) f),
         (select min(t.trial_until) from webhook_targets t
           where ${group('t')} and t.id in (select target_id from eligible) and t.breaker_state = 'half-open'
             and t.trial_until > now()),
         (select min(t.open_until) from webhook_targets t
           where ${group('t')} and t.id in (select target_id from eligible) and t.breaker_state = 'open'
             and t.open_until > now()),
         (select min(t.hold_until) from webhook_targets t
           where ${group('t')} and t.id in (select target_id from eligible) and t.hold_until > now()),
         (select min(now() + make_interval(secs => (1 - s.rate_tokens) / s.rate_limit))
            from spent s where s.rate_tokens < 1))
       end as next_due,
       (select cursor from lap) as cursor,
       (select wrapped from lap) as wrapped`;
};

/**
 * The claim's pick statement alone, each input a named binding (`claimBindings`), typed as
 * today's were: what `EXPLAIN` shows of the claim (`webhooks_claim` runs it with its parameters).
 * Run for real it locks, half-opens and spends tokens but leases nothing: explain it in a
 * transaction rolled back.
 */
export const CLAIM_PICK_SQL = pickStatement((name) => `:${name}::${CLAIM_PARAMETERS[name]}`);

/**
 * The fair claim (docs/dispatcher.md › Scheduling) as one call (R1, docs/scaling.md): first the
 * pick statement (`pickStatement`: the walk, the trials, the rooms and the token buckets, the
 * rows chosen and locked `for update skip locked`, and what the loop needs) into variables, then
 * the lease of the chosen rows, `webhooks_lease`, as a statement of its own (R3: a function over
 * tables is never called from a statement over tables). Answers, as JSON: `leased` (the
 * deliveries, in the claim's order), `open_targets`, `more`, `capped_targets`, `next_due`,
 * `cursor`, `wrapped` (`Claim` in `claim.ts`). The rows stay locked from the pick to the lease:
 * both run in the call's transaction.
 */
export const WEBHOOKS_CLAIM_FUNCTION = `
    create or replace function webhooks_claim(${CLAIM_PARAMETER_NAMES.map((name) => `p_${name} ${CLAIM_PARAMETERS[name]}`).join(', ')})
    returns json
    language plpgsql ${GENERIC_PLANS} as $$
    declare
      v_chosen bigint[];
      v_bare bigint[];
      v_open_targets int[];
      v_more boolean;
      v_capped_targets int[];
      v_next_due timestamptz;
      v_cursor int;
      v_wrapped boolean;
      v_leased json;
    begin
      ${pickStatement((name) => `p_${name}`)}
        into v_chosen, v_bare, v_open_targets, v_more, v_capped_targets, v_next_due, v_cursor, v_wrapped;
      v_leased := webhooks_lease(v_chosen, p_dispatcher_id, p_lease_ms, v_bare, p_buckets);
      return json_build_object('leased', v_leased, 'open_targets', v_open_targets, 'more', v_more,
                               'capped_targets', v_capped_targets, 'next_due', v_next_due,
                               'cursor', v_cursor, 'wrapped', v_wrapped);
    end
    $$;
`;
