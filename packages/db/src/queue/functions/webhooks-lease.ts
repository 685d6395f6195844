import { WebhookState } from '@platform/shared';
import { inBuckets, PRIMARY_KEY_PLANS } from '../sql';
import { NO_DELIVERIES } from './webhook-deliveries';

/**
 * Leases webhooks to a dispatcher for p_lease_ms and answers what their deliveries need, as
 * `webhook_deliveries` answers it (each shared row once; `readDeliveries`). Each lease counts an attempt, except for a webhook whose previous lease ran out
 * without a result (its dispatcher died or stopped mid-try): that try was counted and is not
 * counted again; it comes back interrupted: true, and the dispatcher records it as an
 * 'interrupted' attempt instead of delivering. A webhook whose registration was deleted after
 * it was written is Aborted instead (registration_deleted: true), never delivered. p_bare: ids the
 * dispatcher records without a request (an open breaker's): answered without their entity.
 */
export const WEBHOOKS_LEASE_FUNCTION = `
    create or replace function webhooks_lease(p_ids bigint[], p_dispatcher_id text, p_lease_ms float8,
                                              p_bare bigint[] default '{}', p_buckets int[] default null)
    returns json
    language plpgsql ${PRIMARY_KEY_PLANS} as $$
    declare
      -- the transaction's time as a variable: Citus refuses now() inside CASE in an UPDATE (docs/scaling.md, R4)
      v_now timestamptz := now();
      interrupted bigint[];
      leased bigint[];
    begin
      -- a claim that found nothing (a wake-up without work) leases nothing and builds nothing
      if coalesce(cardinality(p_ids), 0) = 0 then
        return ${NO_DELIVERIES};
      end if;
      -- \`prior\` reads the rows as they were before this update: those still leased are the interrupted
      -- (no column may share a variable's name: Postgres refuses the reference as ambiguous)
      with prior as (
        select w.id, w.locked_by is not null as was_leased from webhooks w where ${inBuckets('w')} and w.id = any(p_ids)
      ),
      updated as (
        update webhooks w
           set next_attempt_at = now() + make_interval(secs => p_lease_ms / 1000.0),
               locked_by = case when r.deleted is null then p_dispatcher_id end,
               attempt_count = w.attempt_count + case when r.deleted is null and not p.was_leased then 1 else 0 end,
               state = case when r.deleted is null then w.state else ${WebhookState.Aborted} end,
               completed_at = case when r.deleted is null then w.completed_at else v_now end
          from prior p, webhook_registrations r
         where ${inBuckets('w')} and w.id = p.id and ${inBuckets('r')} and r.id = w.registration_id
        returning w.id, p.was_leased
      )
      select coalesce(array_agg(id), '{}'), coalesce(array_agg(id) filter (where was_leased), '{}')
        into leased, interrupted
        from updated;
      -- in the order of p_ids (the claim's: endpoints interleaved, each endpoint's rows due first
      -- first), which the dispatcher launches in
      if cardinality(leased) < cardinality(p_ids) then
        leased := array(select u.id from unnest(p_ids) with ordinality u(id, n) where u.id = any(leased) order by u.n);
      else
        leased := p_ids;
      end if;
      return webhook_deliveries(leased, interrupted, p_bare, p_buckets);
    end
    $$;
`;
