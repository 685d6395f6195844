import { WebhookState } from '@platform/shared';
import { GENERIC_PLANS, inBuckets } from '../sql';

const { Created, Aborted, Pending } = WebhookState;

/**
 * Releases groups whose head ended: each loses one open webhook, and its oldest Pending (lowest
 * group_seq) becomes the new head. Locks the group rows first, in the fixed order every writer of
 * a group uses, unless the caller did (p_locked: `webhooks_complete`, which locks them before the
 * webhooks it updates). Given p_lease_to, the new head is leased to that dispatcher in the same update (as
 * `webhooks_lease` would: attempt counted, Aborted if its registration was deleted) when a claim
 * could take it: its registration active, its target's breaker closed, not held by a
 * `Retry-After` and without a rate limit (whose tokens only the claim spends). Otherwise it
 * becomes Created and due now, unleased, and the claim's rules decide (paused or disabled: not
 * claimed; open: a circuit-open attempt; half-open: it waits for the trial, or is it; held: it
 * waits for the hold to end; rate-limited: it waits for a token). Returns the
 * promoted webhook ids. `p_buckets`, the caller's shard group, pins every statement (`inBuckets`).
 * Generic plans (`GENERIC_PLANS`), also when `webhooks_complete` calls it:
 * its statements take arrays, one shape for any input.
 */
export const WEBHOOK_GROUPS_RELEASE_FUNCTION = `
    create or replace function webhook_groups_release(
      p_registration_ids int[], p_group_keys text[],
      p_lease_to text default null, p_lease_ms float8 default null, p_locked boolean default false,
      p_buckets int[] default null
    )
    returns setof bigint
    language plpgsql ${GENERIC_PLANS} as $$
    declare
      -- times as variables: Citus refuses now() inside CASE in an UPDATE (docs/scaling.md, R4)
      v_now timestamptz := now();
      v_lease_until timestamptz := v_now + make_interval(secs => p_lease_ms / 1000.0);
    begin
      if not p_locked then
        perform 1 from webhook_groups g
          join (select distinct * from unnest(p_registration_ids, p_group_keys)) as r(registration_id, group_key)
            using (registration_id, group_key)
         where ${inBuckets('g')}
         order by g.registration_id, g.group_key
           for update of g;
      end if;
      return query
      with released as (
        select distinct registration_id, group_key
          from unnest(p_registration_ids, p_group_keys) as r(registration_id, group_key)
      ),
      decremented as (
        update webhook_groups g set open_count = greatest(g.open_count - 1, 0)
          from released r
         where ${inBuckets('g')} and g.registration_id = r.registration_id and g.group_key = r.group_key
        returning g.registration_id, g.group_key, g.open_count
      ),
      heads as (
        select (select w.id from webhooks w
                 where ${inBuckets('w')} and w.registration_id = d.registration_id
                   and w.group_key = d.group_key and w.state = ${Pending}
                 order by w.group_seq limit 1) as id
          from decremented d
         where d.open_count > 0
      ),
      promoted as (
        select h.id, r.deleted is not null as deleted,
               p_lease_to is not null and r.deleted is null and r.status = 'active'
                 and t.breaker_state = 'closed' and (t.hold_until is null or t.hold_until <= now())
                 and t.rate_limit is null as lease
          from heads h
          join webhooks w on ${inBuckets('w')} and w.id = h.id
          join webhook_registrations r on ${inBuckets('r')} and r.id = w.registration_id
          join webhook_targets t on ${inBuckets('t')} and t.id = r.target_id
      )
      update webhooks w
         set state = case when p_lease_to is null or not p.deleted then ${Created} else ${Aborted} end,
             next_attempt_at = case when p.lease then v_lease_until else v_now end,
             locked_by = case when p.lease then p_lease_to end,
             attempt_count = w.attempt_count + case when p.lease then 1 else 0 end,
             completed_at = case when p_lease_to is null or not p.deleted then null else v_now end,
             last_modified = now()
        from promoted p
       where ${inBuckets('w')} and w.id = p.id
      returning w.id;
    end
    $$;
`;
