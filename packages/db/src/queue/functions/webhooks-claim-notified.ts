import { CLAIMABLE_WEBHOOK_STATES } from '@platform/shared';
import { sqlList, GENERIC_PLANS, inBuckets } from '../sql';

const CLAIMABLE = sqlList(CLAIMABLE_WEBHOOK_STATES);

/**
 * The notified rows' claim (docs/dispatcher.md › The notified rows' claim): the claim of the rows
 * a wake-up named (`due:` ids, `DUE_IDS_PREFIX`), for a dispatcher with no other work to claim. It
 * takes only what the fair claim (`webhooks_claim`) would take at once with every one of its rules
 * trivially met, by primary key instead of a walk over the queue: a head (Created or Retrying) due
 * now and never leased; its registration active; its endpoint's breaker closed, no `Retry-After`
 * hold, no rate limit, and room for it in the dispatcher: the endpoint not one of those without
 * room there (`p_full_targets`), at most one row per endpoint, and per origin at most `p_host_room`
 * less what the dispatcher holds of it (`p_origins`, `p_origin_held`); `skip locked`, so one
 * replica wins each row. It leases
 * them (`webhooks_lease`) and answers `leased` and `rest`: how many named rows it left that are
 * still claimable and not leased (another rule applied, a second row of one endpoint, a row
 * another replica is locking). A `rest` above zero sends the loop to the fair claim, which
 * applies every rule; zero means every named row is taken, here or elsewhere, or is no longer
 * claimable. Measured at 0.37 of the fair claim's time for one row at rest
 * (docs/performance.md › Where our latency goes).
 */
export const WEBHOOKS_CLAIM_NOTIFIED_FUNCTION = `
    create or replace function webhooks_claim_notified(p_ids bigint[], p_dispatcher_id text, p_lease_ms float8,
                                                       p_host_room int, p_full_targets int[], p_origins text[],
                                                       p_origin_held int[], p_buckets int[] default null)
    returns json
    language plpgsql ${GENERIC_PLANS} as $$
    declare
      v_ids bigint[];
      v_rest int;
    begin
      -- each named row by primary key, locked first (a locking subquery is never flattened, so no
      -- statistics, stale or not, can turn this into a walk over a registration's rows); its
      -- registration and endpoint then
      select coalesce(array_agg(x.id order by x.id), '{}') into v_ids from (
        select w.id, row_number() over (partition by r.target_id order by w.id) as per_target,
               row_number() over (partition by t.origin order by w.id) + coalesce(o.held, 0) as per_origin
          from unnest(p_ids) as n(id)
         cross join lateral (
           select w.id, w.registration_id from webhooks w
            where ${inBuckets('w')} and w.id = n.id and w.state in (${CLAIMABLE}) and w.locked_by is null
              and w.next_attempt_at <= now()
              for update skip locked) w
          join webhook_registrations r on ${inBuckets('r')} and r.id = w.registration_id
          join webhook_targets t on ${inBuckets('t')} and t.id = r.target_id
          left join unnest(p_origins, p_origin_held) as o(origin, held) on o.origin = t.origin
         where r.status = 'active' and r.deleted is null
           and t.breaker_state = 'closed' and (t.hold_until is null or t.hold_until <= now())
           and t.rate_limit is null and t.id <> all(p_full_targets)) x
       where x.per_target = 1 and (p_host_room is null or x.per_origin <= p_host_room);
      -- by primary key too (the limit keeps the subquery a probe per id)
      select count(*) into v_rest
        from unnest(p_ids) as n(id)
       cross join lateral (
         select 1 from webhooks w
          where ${inBuckets('w')} and w.id = n.id and w.state in (${CLAIMABLE}) and w.locked_by is null
          limit 1) w
       where n.id <> all(v_ids);
      return json_build_object('leased', webhooks_lease(v_ids, p_dispatcher_id, p_lease_ms, '{}', p_buckets), 'rest', v_rest);
    end
    $$;
`;
