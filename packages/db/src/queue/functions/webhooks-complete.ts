import { ATTEMPT_OUTCOME_CODES, CLAIMABLE_WEBHOOK_STATES, WebhookState } from '@platform/shared';
import { DELIVERIES_STOPPED_PAYLOAD } from '../../notify';
import { inBuckets, sqlList } from '../sql';
import { NO_DELIVERIES } from './webhook-deliveries';

const { Created, Successful, Failed } = WebhookState;
const {
  neutral: NEUTRAL,
  success: SUCCESS,
  'target-failure': TARGET_FAILURE,
  failure: FAILURE,
} = ATTEMPT_OUTCOME_CODES;

/**
 * Per registration of the batch's results (all but the neutral ones, that asked nobody): whether
 * one succeeded, the failures after its last success, and whether one of those answered 410.
 */
const REGISTRATION_RUNS = `
  select registration_id as id, bool_or(outcome = ${SUCCESS}) as any_success,
         (count(*) filter (where outcome <> ${SUCCESS} and i > coalesce(last_success, 0)))::int as tail_failures,
         coalesce(bool_or(status_code = 410 and i > coalesce(last_success, 0)), false) as gone
    from (select t.registration_id, t.outcome, t.status_code, t.i,
                 max(t.i) filter (where t.outcome = ${SUCCESS}) over (partition by t.registration_id) as last_success
            from unnest(p_registration_ids, p_outcomes, p_status_codes) with ordinality
                   as t(registration_id, outcome, status_code, i)
           where t.outcome <> ${NEUTRAL}) r
   group by registration_id`;

/**
 * Per endpoint of the batch's applied results, in the order they finished (not circuit-open
 * ones, which asked it nothing): whether one succeeded, whether one got an answer (a 2xx, or any
 * status but a 5xx), the target failures after its last answer, whether one sent no request or
 * got no verdict, and the longest hold one asked for (a 429 or 503 with Retry-After), or null.
 */
const TARGET_RUNS = `
  select target_id as id, bool_or(outcome = ${SUCCESS}) as any_success, bool_or(answered) as any_answer,
         (count(*) filter (where outcome = ${TARGET_FAILURE} and i > coalesce(last_answer, 0)))::int as tail_failures,
         bool_or(not answered and outcome <> ${TARGET_FAILURE}) as unanswered,
         max(hold_ms) filter (where hold_ms > 0) as hold_ms
    from (select t.target_id, t.outcome, t.i, t.answered, t.hold_ms,
                 max(t.i) filter (where t.answered) over (partition by t.target_id) as last_answer
            from (select u.*, u.outcome = ${SUCCESS} or (u.outcome = ${FAILURE} and u.status_code is not null) as answered
                    from unnest(p_ids, p_target_ids, p_outcomes, p_status_codes, p_error_kinds, p_hold_ms)
                           with ordinality as u(id, target_id, outcome, status_code, error_kind, hold_ms, i)
                   where u.id = any(applied) and u.error_kind is distinct from 'circuit-open') t) r
   group by target_id`;

/**
 * Records a batch of delivery results: the state update guarded by the lease and the try (a
 * dispatcher whose lease ran out cannot overwrite newer state, nor a late result of an earlier
 * try count again), one attempt row per applied result, the
 * health figures (per-minute stats, the endpoints' breakers, the registrations' failing runs and
 * automatic disable, told to the party's operators by `webhook_notify`), and the release of the groups whose head ended. Rows are
 * locked first, each table in id order, registrations before groups before targets (the order
 * a registration's delete takes), and a registration or target only when its row must change:
 * a healthy steady state writes neither (last_success_at moves at most every 10 seconds). A step
 * the batch needs nothing of is not run at all (each statement run costs its executor set-up,
 * about a fifth of the backend's CPU in a drain: docs/performance.md › Statements and plans of
 * the queue functions): the updates of registrations and targets when none must change, the group locks and
 * releases when no result is of a grouped webhook, the notification loop when none was disabled. The
 * new heads of the released groups are leased straight to the calling dispatcher (p_lease_ms)
 * when a claim could take them (webhook_groups_release). A NOTIFY wakes the dispatchers when
 * the batch made work claimable that no timer knows of: a breaker closed, a half-open trial
 * that ended without an answer, a released head left unleased.
 * A result's hold (p_hold_ms: a 429 or 503 with `Retry-After`, as the dispatcher clamped it)
 * holds its endpoint until now() + that (`hold_until`, never shortened); a hold begun or a
 * registration disabled sends the `stopped` notification, so every dispatcher hands back what it
 * buffered of them.
 * p_outcomes: per result, its code in `ATTEMPT_OUTCOME_CODES` (`attemptOutcome` in
 * packages/shared). p_policy: breakerFailures, breakerCooldownMs,
 * breakerMaxCooldownMs, disableAfterMs, disableMinAttempts.
 * Answers { "applied": [ids], "leased": [as webhooks_lease], "disabled": [{ registrationId, reason }] }.
 */
export const WEBHOOKS_COMPLETE_FUNCTION = `
    create or replace function webhooks_complete(
      p_dispatcher_id text, p_lease_ms float8,
      p_ids bigint[], p_states smallint[], p_retry_delays_ms float8[],
      p_attempts smallint[], p_started_at timestamptz[], p_durations_ms int[],
      p_status_codes smallint[], p_error_kinds text[], p_response_bodies text[],
      p_registration_ids int[], p_group_keys text[], p_releases boolean[],
      p_target_ids int[], p_outcomes smallint[], p_hold_ms float8[], p_policy json,
      p_requests jsonb[], p_response_headers jsonb[], p_buckets int[] default null
    )
    returns json
    language plpgsql as $$
    declare
      -- the transaction's time as a variable, and times derived from it computed in a SELECT: Citus
      -- refuses now() inside CASE in an UPDATE, and a stable operator on a column (docs/scaling.md, R4)
      v_now timestamptz := now();
      applied bigint[];
      promoted bigint[];
      -- a promoted head left unleased that a claim may take
      unleased boolean;
      release_registrations int[];
      release_keys text[];
      disabled json;
      -- a registration this batch disabled, whose party is told
      dis record;
      wake boolean := false;
      -- a hold began or a registration was disabled: dispatchers drop what they buffered of it
      stopped boolean := false;
      -- the registrations and targets whose rows this batch changes, locked in id order: in a
      -- healthy steady state none, and their updates are not run at all
      reg_changing int[];
      tgt_changing int[];
      -- whether any result is of a grouped webhook: only then are groups locked and released
      grouped boolean := cardinality(array_remove(p_group_keys, null)) > 0;
    begin
      reg_changing := array(
        select g.id from webhook_registrations g
          join (${REGISTRATION_RUNS}) as a using (id)
         where ${inBuckets('g')}
           and (a.tail_failures > 0 or g.failures_since_success <> 0
                or g.last_success_at is null or g.last_success_at < now() - interval '10 seconds')
         order by g.id
           for no key update of g);

      if grouped then
        perform 1 from webhook_groups g
          join (select distinct registration_id, group_key
                  from unnest(p_registration_ids, p_group_keys, p_releases) as r(registration_id, group_key, releases)
                 where releases and group_key is not null) as r
            using (registration_id, group_key)
         where ${inBuckets('g')}
         order by g.registration_id, g.group_key
           for update of g;
      end if;

      with results as (
        select r.*, v_now + make_interval(secs => r.retry_delay_ms / 1000.0) as retry_at
          from unnest(p_ids, p_states, p_retry_delays_ms, p_attempts) as r(id, state, retry_delay_ms, attempt)
      ),
      updated as (
        update webhooks w
           set state = r.state,
               next_attempt_at = case when r.retry_delay_ms is null then w.next_attempt_at else r.retry_at end,
               locked_by = null,
               last_modified = now(),
               completed_at = case when r.state in (${sqlList([Successful, Failed])}) then v_now end
          from results r
         where ${inBuckets('w')} and w.id = r.id and w.locked_by = p_dispatcher_id and w.state in (${sqlList(CLAIMABLE_WEBHOOK_STATES)})
           -- the result of the try the row is at: a late result of an earlier try (its lease ran
           -- out, the row was recorded interrupted and leased to us again) is not applied twice
           and w.attempt_count = r.attempt
        returning w.id
      )
      select coalesce(array_agg(id), '{}') into applied from updated;

      insert into webhook_attempts (webhook_id, number, started_at, duration_ms, status_code, error_kind, response_body,
                                    request, response_headers)
      select r.id, r.attempt, r.started_at, r.duration_ms, r.status_code, r.error_kind, r.response_body,
             r.request, r.response_headers
        from unnest(p_ids, p_attempts, p_started_at, p_durations_ms, p_status_codes, p_error_kinds, p_response_bodies,
                    p_requests, p_response_headers)
               as r(id, attempt, started_at, duration_ms, status_code, error_kind, response_body, request, response_headers)
       where r.id = any(applied);

      -- per-minute figures for GET .../health and the time series; a latency bucket only for a
      -- request that was sent
      insert into webhook_attempt_stats as s (registration_id, minute, bucket, attempts, successes, target_failures)
      select r.registration_id, date_trunc('minute', now()),
             case when r.status_code is not null or r.outcome = ${TARGET_FAILURE}
                  then floor(ln(greatest(r.duration_ms, 0) + 1) / ln(1.1))::smallint else -1 end as bucket,
             count(*), count(*) filter (where r.outcome = ${SUCCESS}),
             count(*) filter (where r.outcome = ${TARGET_FAILURE})
        from unnest(p_ids, p_registration_ids, p_outcomes, p_durations_ms, p_status_codes)
               as r(id, registration_id, outcome, duration_ms, status_code)
       where r.id = any(applied)
       group by 1, 2, 3
       order by 1, 2, 3
      on conflict (registration_id, minute, bucket)
        do update set attempts = s.attempts + excluded.attempts, successes = s.successes + excluded.successes,
                      target_failures = s.target_failures + excluded.target_failures;

      -- the breakers: per target, the results in the order they finished (TARGET_RUNS). A run of
      -- target failures (timeouts, connection errors, 5xx) opens it; any answer but a 5xx (a 2xx,
      -- a 4xx, a redirect) shows the target up: it ends the run and closes a half-open breaker.
      -- Results that asked the target nothing leave the run as it is, and let a half-open breaker
      -- send another trial now (the one it had ended without a verdict).
      tgt_changing := array(
        select t.id from webhook_targets t
          join (${TARGET_RUNS}) as a using (id)
         where ${inBuckets('t')}
           and (a.tail_failures > 0 or t.breaker_state <> 'closed' or t.consecutive_failures <> 0 or a.hold_ms is not null
                or (a.any_success and (t.last_success_at is null or t.last_success_at < now() - interval '10 seconds')))
         order by t.id
           for no key update of t);

      if cardinality(tgt_changing) > 0 then
        with n as (
          select t.id, a.any_success, a.any_answer, a.tail_failures, a.unanswered, a.hold_ms, t.breaker_state as was,
                 case when a.any_answer then a.tail_failures else t.consecutive_failures + a.tail_failures end as failures,
                 -- the end of the cool-down if the breaker opens now, and of the hold a Retry-After asked for
                 v_now + make_interval(secs => least((p_policy->>'breakerMaxCooldownMs')::float8,
                   (p_policy->>'breakerCooldownMs')::float8 * 2 ^ least(t.opens, 30)) / 1000.0) as reopen_until,
                 v_now + make_interval(secs => a.hold_ms / 1000.0) as hold_to
            from webhook_targets t
            join (${TARGET_RUNS}) as a using (id)
           where ${inBuckets('t')} and t.id = any(tgt_changing)
        ),
        s as (
          select n.*,
                 case when n.tail_failures = 0 and n.any_answer then 'closed'
                      when n.tail_failures = 0 then n.was
                      when n.was = 'open' then 'open'
                      when n.was = 'half-open' and not n.any_answer then 'open'
                      when n.failures >= (p_policy->>'breakerFailures')::int then 'open'
                      else 'closed' end as state
            from n
        ),
        updated as (
          update webhook_targets t
             set consecutive_failures = s.failures,
                 breaker_state = s.state,
                 opens = case when s.state = 'closed' then 0
                              when s.state = 'open' and s.was <> 'open' then t.opens + 1
                              else t.opens end,
                 open_until = case when s.state = 'closed' then null
                                   when s.state = 'open' and s.was <> 'open' then s.reopen_until
                                   else t.open_until end,
                 trial_until = case when s.state = s.was and not (s.state = 'half-open' and s.unanswered)
                                    then t.trial_until end,
                 last_success_at = case when s.any_success then v_now else t.last_success_at end,
                 last_failure_at = case when s.tail_failures > 0 then v_now else t.last_failure_at end,
                 state_changed = case when s.state <> s.was then v_now else t.state_changed end,
                 -- an opening lasts from leaving closed to closing again; it is told once
                 -- (webhook_breakers_notify), so a new one starts untold
                 open_since = case when s.state = 'closed' then null
                                   when s.was = 'closed' then v_now else t.open_since end,
                 open_notified_at = case when s.state = 'closed' then null else t.open_notified_at end,
                 -- a Retry-After holds the endpoint until then; a later, shorter one does not cut it
                 hold_until = case when s.hold_ms is null then t.hold_until
                                   else greatest(t.hold_until, s.hold_to) end
            from s
           where ${inBuckets('t')} and t.id = s.id
          returning s.was, s.state, s.unanswered, s.hold_ms
        )
        select coalesce(bool_or((was <> 'closed' and state = 'closed') or (state = 'half-open' and unanswered)), false),
               coalesce(bool_or(hold_ms is not null), false)
          into wake, stopped
          from updated;
      end if;

      -- the registrations' failing runs; a 410 or a long enough run disables, and mails the party
      disabled := '[]';
      if cardinality(reg_changing) > 0 then
        with n as (
          select g.id, g.party_id, g.target_url, g.status as was, a.gone, a.any_success,
                 case when a.any_success then a.tail_failures else g.failures_since_success + a.tail_failures end as failures,
                 case when a.tail_failures = 0 then null
                      when a.any_success then now()
                      else coalesce(g.failing_since, now()) end as failing_since
            from webhook_registrations g
            join (${REGISTRATION_RUNS}) as a using (id)
           where ${inBuckets('g')} and g.id = any(reg_changing)
        ),
        s as (
          select n.*,
                 case when n.was <> 'active' then null
                      when n.gone then 'gone'
                      when n.failing_since <= now() - make_interval(secs => (p_policy->>'disableAfterMs')::float8 / 1000.0)
                           and n.failures >= (p_policy->>'disableMinAttempts')::int then 'failing'
                 end as disable
            from n
        ),
        changed as (
          update webhook_registrations g
             set failures_since_success = s.failures,
                 failing_since = s.failing_since,
                 last_success_at = case when s.any_success then v_now else g.last_success_at end,
                 status = case when s.disable is not null then 'disabled' else g.status end,
                 disabled_reason = coalesce(s.disable, g.disabled_reason),
                 status_changed = case when s.disable is not null then v_now else g.status_changed end
            from s
           where ${inBuckets('g')} and g.id = s.id
          returning g.id, g.party_id, g.target_url, s.disable
        )
        select coalesce(json_agg(json_build_object('registrationId', c.id, 'reason', c.disable)), '[]')
          into disabled
          from changed c where c.disable is not null;
      end if;
      stopped := stopped or json_array_length(disabled) > 0;

      -- each disabled registration's party is told (its recipients mailed, its operator webhook
      -- written), in this transaction
      -- one call per registration, not a function called over a table's rows (Citus, R3)
      if json_array_length(disabled) > 0 then
        for dis in select g.id, g.party_id, g.target_url, g.disabled_reason from webhook_registrations g
                    where ${inBuckets('g')} and g.id in (select (d->>'registrationId')::int from json_array_elements(disabled) d)
                    order by g.id loop
          perform webhook_notify(
                    dis.party_id, 'registration-disabled',
                    format('Webhook deliveries to %s stopped', dis.target_url),
                    format(E'The webhook registration %s (%s) was disabled: %s.\n\n'
                           'Its webhooks are kept, not lost. Once the endpoint is fixed, resume the registration '
                           '(POST /api/webhook-registrations/%s/resume, or Resume in the console) and they are delivered in order.',
                           dis.id, dis.target_url,
                           case dis.disabled_reason when 'gone' then 'the endpoint answered 410 Gone'
                                else 'every delivery attempt has failed for a long time' end,
                           dis.id),
                    jsonb_build_object('registrationId', dis.id, 'targetUrl', dis.target_url, 'reason', dis.disabled_reason));
        end loop;
      end if;

      if grouped then
        select array_agg(r.registration_id), array_agg(r.group_key)
          into release_registrations, release_keys
          from unnest(p_ids, p_registration_ids, p_group_keys, p_releases) as r(id, registration_id, group_key, releases)
         where r.releases and r.group_key is not null and r.id = any(applied);
      end if;
      if release_registrations is not null then
        -- the group rows are locked above, in the order every writer of a group takes them
        promoted := array(select webhook_groups_release(release_registrations, release_keys, p_dispatcher_id, p_lease_ms,
                                                        p_locked => true, p_buckets => p_buckets));
        -- a head left unleased (its registration paused or disabled, its target not closed) is
        -- the claim's to take, when its rules let it; the ones leased to us are answered
        select coalesce(bool_or(w.locked_by is null and w.state = ${Created} and r.status = 'active'), false),
               coalesce(array_agg(w.id order by w.id) filter (where w.locked_by = p_dispatcher_id), '{}')
          into unleased, promoted
          from webhooks w join webhook_registrations r on ${inBuckets('r')} and r.id = w.registration_id
         where ${inBuckets('w')} and w.id = any(promoted);
        wake := wake or unleased;
      end if;
      if wake then
        perform pg_notify('webhook_due', '');
      end if;
      if stopped then
        perform pg_notify('webhook_due', '${DELIVERIES_STOPPED_PAYLOAD}');
      end if;

      return json_build_object(
        'applied', to_json(applied),
        'leased', case when coalesce(cardinality(promoted), 0) = 0 then ${NO_DELIVERIES} else webhook_deliveries(promoted, p_buckets => p_buckets) end,
        'disabled', disabled
      );
    end
    $$;
`;
