import type { Knex } from 'knex';
import { WebhookState } from '@platform/shared';
import { WEBHOOK_DUE_CHANNEL } from '../notify';

/** One change of one entity, as change capture records it. */
export interface EntityChangeInput {
  entityName: string;
  /** WebhookEventType: 1 Created, 2 Updated, 3 Deleted. */
  type: 1 | 2 | 3;
  entityId: number;
  /** The entity's full serialized read shape. */
  entity: unknown;
  initiatorPartyId: number;
  initiatorAccountId: number | null;
}

/**
 * Records a change and fans it out, in one statement, to one webhook per live registration of the
 * initiator's party subscribed to (entityName, type) (spec 6.1.2). Grouped registrations upsert
 * their `webhook_groups` row first: the upsert row-locks the group until commit, so producers of
 * one group serialise and `group_seq` follows commit order; the new webhook is the group's head
 * (Created) when it is the only open one, else it waits (Pending). Group rows are upserted in
 * registration order, so writers of the same entity cannot deadlock on them. A registration
 * deleted while this runs may still get a webhook; the claim aborts such webhooks instead of
 * delivering them. When it created webhooks, the same statement queues the NOTIFY that wakes the
 * dispatchers on commit. Returns how many webhooks were created.
 */
export async function enqueueEntityChange(trx: Knex.Transaction, change: EntityChangeInput): Promise<number> {
  const groupKey = `${change.entityName}:${change.entityId}`;
  const { rows } = await trx.raw<{ rows: { count: number }[] }>(
    `with change as (
       insert into entity_changes (entity_name, type, entity_id, entity, initiator_party_id, initiator_account_id)
       values (:entityName, :type, :entityId, :entity, :partyId, :accountId)
       returning id
     ),
     subscriptions as (
       select r.id as registration_id, r.should_group, e.id as event_id
         from webhook_registrations r
         join webhook_events e on e.registration_id = r.id
        where r.party_id = :partyId and r.deleted is null
          and e.entity_name = :entityName and e.type = :type and e.deleted is null
     ),
     groups as (
       insert into webhook_groups as g (registration_id, group_key, next_seq, open_count)
       select registration_id, :groupKey, 1, 1 from subscriptions where should_group
        order by registration_id
       on conflict (registration_id, group_key)
       do update set next_seq = g.next_seq + 1, open_count = g.open_count + 1
       returning g.registration_id, g.next_seq, g.open_count
     ),
     inserted as (
       insert into webhooks (registration_id, event_id, entity_change_id, state, group_key, group_seq)
       select s.registration_id, s.event_id, change.id,
              case when g.open_count > 1 then ${WebhookState.Pending} else ${WebhookState.Created} end,
              case when s.should_group then :groupKey end,
              g.next_seq
         from subscriptions s
         cross join change
         left join groups g on g.registration_id = s.registration_id
       returning 1
     ),
     counted as (select count(*)::int as count from inserted)
     -- wakes the dispatchers on commit; Postgres folds a transaction's identical notifications
     -- into one, so a transaction of many changes still sends a single NOTIFY
     select count, (select true from pg_notify(:channel, '') where count > 0) as notified from counted`,
    {
      entityName: change.entityName,
      type: change.type,
      entityId: change.entityId,
      entity: JSON.stringify(change.entity),
      partyId: change.initiatorPartyId,
      accountId: change.initiatorAccountId,
      groupKey,
      channel: WEBHOOK_DUE_CHANNEL,
    },
  );
  return rows[0]?.count ?? 0;
}
