import { FINAL_WEBHOOK_STATES, GROUP_HOLDING_STATES, WebhookState } from '@platform/shared';
import { sqlList, GENERIC_PLANS, inBuckets } from '../sql';

const { Retrying, Failed, Aborted, Pending, Resolved } = WebhookState;
const HEAD = sqlList(GROUP_HOLDING_STATES.head);
const BLOCKING = sqlList(GROUP_HOLDING_STATES.blocking);

/**
 * An operator action on webhooks, the state rules of docs/webhooks.md#the-state-machine in one
 * place:
 * - abort / resolve: any webhook not final (Created, Retrying, Failed, Pending) ends as Aborted
 *   / Resolved. One that holds its group (`GROUP_HOLDING_STATES`: a head, or a Failed one blocking
 *   it) releases it, so the group's next Pending becomes due; a Pending one just leaves the chain.
 * - retry: a Failed webhook of a live registration is due again: Retrying, or Pending when it
 *   re-enters a continue-after-fail group that has another open webhook (it is next in line by
 *   its place in the group). p_fresh starts its schedule again (attempt count 0: all 7 attempts);
 *   otherwise it keeps its count and gets one more attempt. Its target's open breaker half-opens,
 *   so the first delivery is the trial.
 * The groups are locked first, in the order enqueue and release lock them, then the webhooks in
 * id order (a group's webhooks in group order, so a batch re-enters them in their order). Each
 * webhook gets p_action_id as its last operator action. Answers every id with 'changed' or why
 * it was skipped; ids that do not exist are left out. `p_buckets`, the shard group of the ids
 * (null: every bucket, the one database), pins every statement (`inBuckets`, R2). Wakes the dispatchers when a webhook
 * became due, unless p_notify is false: a caller whose transaction may commit on two nodes (on
 * Citus, any that wrote the audit row) wakes them after its commit instead (docs/scaling.md, R6).
 */
export const WEBHOOKS_OPERATOR_APPLY_FUNCTION = `
    create or replace function webhooks_operator_apply(
      p_action text, p_ids bigint[], p_fresh boolean, p_action_id bigint, p_now timestamptz,
      p_notify boolean default true, p_buckets int[] default null
    )
    returns table (webhook_id bigint, outcome text)
    language plpgsql ${GENERIC_PLANS} as $$
    declare
      w record;
      opened int;
      woke boolean := false;
    begin
      if p_action not in ('abort', 'resolve', 'retry') then
        raise exception 'unknown operator action %', p_action;
      end if;
      perform 1 from webhook_groups g
        join (select distinct x.registration_id, x.group_key from webhooks x
               where ${inBuckets('x')} and x.id = any(p_ids) and x.group_key is not null) k
       using (registration_id, group_key)
       where ${inBuckets('g')}
       order by g.registration_id, g.group_key
         for update of g;
      for w in
        select x.id, x.registration_id, x.state, x.group_key, r.target_id,
               r.should_group_continue_after_fail as continue_after_fail, r.deleted is not null as deleted
          from webhooks x
          join webhook_registrations r on ${inBuckets('r')} and r.id = x.registration_id
         where ${inBuckets('x')} and x.id = any(p_ids)
         order by x.id
           for update of x
      loop
        webhook_id := w.id;
        if p_action in ('abort', 'resolve') then
          if w.state in (${sqlList(FINAL_WEBHOOK_STATES)}) then
            outcome := 'final';
            return next;
            continue;
          end if;
          update webhooks
             set state = case p_action when 'abort' then ${Aborted} else ${Resolved} end,
                 completed_at = p_now, last_modified = p_now,
                 -- a dispatcher delivering it right now can no longer complete it
                 locked_by = null, last_action_id = p_action_id
           where ${inBuckets('webhooks')} and id = w.id;
          if w.group_key is not null then
            if w.state = ${Pending} then
              update webhook_groups set open_count = greatest(open_count - 1, 0)
               where ${inBuckets('webhook_groups')} and registration_id = w.registration_id
                 and group_key = w.group_key;
            elsif w.state in (${HEAD}) or (w.state in (${BLOCKING}) and not w.continue_after_fail) then
              if exists (select 1 from webhook_groups_release(array[w.registration_id], array[w.group_key],
                                                                     p_buckets => p_buckets)) then
                woke := true;
              end if;
            end if;
          end if;
        else
          if w.state <> ${Failed} then
            outcome := 'not-failed';
            return next;
            continue;
          end if;
          if w.deleted then
            outcome := 'registration-deleted';
            return next;
            continue;
          end if;
          opened := 1;
          if w.group_key is not null and w.continue_after_fail then
            update webhook_groups set open_count = open_count + 1
             where ${inBuckets('webhook_groups')} and registration_id = w.registration_id
               and group_key = w.group_key
            returning open_count into opened;
          end if;
          update webhooks
             set state = case when opened > 1 then ${Pending} else ${Retrying} end,
                 next_attempt_at = now(),
                 attempt_count = case when p_fresh then 0 else attempt_count end,
                 completed_at = null, last_modified = p_now, locked_by = null, last_action_id = p_action_id
           where ${inBuckets('webhooks')} and id = w.id;
          if opened <= 1 then woke := true; end if;
          perform webhook_target_half_open(w.registration_id, p_buckets);
        end if;
        outcome := 'changed';
        return next;
      end loop;
      if woke and p_notify then perform pg_notify('webhook_due', ''); end if;
    end
    $$;
`;
