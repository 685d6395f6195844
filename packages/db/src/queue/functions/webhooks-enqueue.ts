import { WebhookState } from '@platform/shared';
import { DUE_IDS_MAX, DUE_IDS_PREFIX, WEBHOOK_DUE_CHANNEL } from '../../notify';
import { GENERIC_PLANS } from '../sql';

/**
 * The fan-out of one change (`enqueueEntityChange`, `replayEntityChange` in `../enqueue.ts`):
 * records the change (or, given p_change_id, fans out one already recorded), then writes one
 * webhook per subscription (`webhook_subscriptions`: the registrations of the initiator's party),
 * narrowed to p_only_registration when given (a replay). Grouped registrations upsert their
 * `webhook_groups` row first, in registration order (so writers of the same entity cannot
 * deadlock on them): the upsert row-locks the group until commit, so producers of one group
 * serialise and `group_seq` follows commit order; the new webhook is the group's head (Created)
 * when it is the only open one, else it waits (Pending) behind the open ones. When it created
 * webhooks and p_notify is true, queues the NOTIFY that wakes the dispatchers on commit: the
 * transaction's first names the heads it wrote (`due:` and their ids, at most DUE_IDS_MAX: the
 * notified rows' claim, `webhooks_claim_notified`), marked sent in a transaction-local setting; every
 * later one is '', which Postgres folds into one. Answers how many webhooks it wrote.
 *
 * One statement per step, no data-modifying CTE, the subscriptions read once into arrays: the
 * form Citus can run on the bucket's node (docs/scaling.md, R5 and R6: an INSERT inside a WITH is
 * planned through the coordinator, and so would be its NOTIFY). The groups and webhooks it writes
 * carry the initiator's tenant bucket from the directory (`parties.bucket`, ../../buckets.ts): the
 * bucket of the registrations it fans out to, which are the initiator's; every statement on a
 * bucket table pins it (R2), so on the bucket layout each reads one partition. The group upsert names
 * its key rather than listing the key's columns: on the bucket-partitioned layout
 * (packages/db/tests/bucket-layout.ts) the same key leads with the bucket.
 */
export const WEBHOOKS_ENQUEUE_FUNCTION = `
    create or replace function webhooks_enqueue(
      p_change_id bigint, p_entity_name text, p_type smallint, p_entity_id int, p_entity jsonb,
      p_party_id int, p_account_id int, p_group_key text, p_action_id bigint,
      p_only_registration int default null, p_trace_context jsonb default null, p_notify boolean default true
    )
    returns int
    language plpgsql ${GENERIC_PLANS} as $$
    declare
      v_change bigint := p_change_id;
      v_registrations int[];
      v_grouped boolean[];
      v_events int[];
      v_count int := 0;
      v_heads bigint[] := '{}';
      v_id bigint;
      v_state smallint;
      v_bucket int;
    begin
      if v_change is null then
        insert into entity_changes (entity_name, type, entity_id, entity, initiator_party_id, initiator_account_id)
        values (p_entity_name, p_type, p_entity_id, p_entity, p_party_id, p_account_id)
        returning id into v_change;
      end if;
      select p.bucket into v_bucket from parties p where p.id = p_party_id;
      select array_agg(s.registration_id order by s.registration_id),
             array_agg(s.should_group order by s.registration_id),
             array_agg(s.event_id order by s.registration_id)
        into v_registrations, v_grouped, v_events
        from webhook_subscriptions(v_bucket, p_party_id, p_entity_name, p_type) s
       where p_only_registration is null or s.registration_id = p_only_registration;
      if v_registrations is null then
        return 0;
      end if;
      if true = any(v_grouped) then
        insert into webhook_groups as g (registration_id, group_key, next_seq, open_count, bucket)
        select s.registration_id, p_group_key, 1, 1, v_bucket
          from unnest(v_registrations, v_grouped) as s(registration_id, should_group)
         where s.should_group
         order by s.registration_id
        on conflict on constraint webhook_groups_pkey
        do update set next_seq = g.next_seq + 1, open_count = g.open_count + 1;
      end if;
      -- the group rows as the upsert left them (locked by it, so as this transaction wrote them);
      -- a loop over the insert's rows, not a data-modifying CTE (R5), collects the heads' ids
      for v_id, v_state in
      insert into webhooks (registration_id, event_id, entity_change_id, state, group_key, group_seq,
                            last_action_id, trace_context, bucket)
      select s.registration_id, s.event_id, v_change,
             case when g.open_count > 1 then ${WebhookState.Pending} else ${WebhookState.Created} end,
             case when s.should_group then p_group_key end,
             g.next_seq, p_action_id, p_trace_context, v_bucket
        from unnest(v_registrations, v_grouped, v_events) as s(registration_id, should_group, event_id)
        left join webhook_groups g
          on s.should_group and g.bucket = v_bucket and g.registration_id = s.registration_id
         and g.group_key = p_group_key
       -- ids in registration order, whatever join the planner picks
       order by s.registration_id
      returning id, state
      loop
        v_count := v_count + 1;
        if v_state = ${WebhookState.Created} then v_heads := v_heads || v_id; end if;
      end loop;
      if v_count > 0 and p_notify then
        if cardinality(v_heads) between 1 and ${DUE_IDS_MAX}
           and coalesce(current_setting('platform.due_ids_sent', true), '') = '' then
          perform set_config('platform.due_ids_sent', 'yes', true);
          perform pg_notify('${WEBHOOK_DUE_CHANNEL}', '${DUE_IDS_PREFIX}' || array_to_string(v_heads, ','));
        else
          perform pg_notify('${WEBHOOK_DUE_CHANNEL}', '');
        end if;
      end if;
      return v_count;
    end
    $$;
`;
