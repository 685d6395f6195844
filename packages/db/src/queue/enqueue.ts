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
  /**
   * The writing request's W3C trace context, stored with each webhook when tracing is on
   * (docs/dispatcher.md › Tracing); absent, the statement writes no trace column at all.
   */
  traceContext?: { traceparent: string; tracestate?: string };
}

/** A change already recorded in `entity_changes`, as a replay fans it out again. */
export interface RecordedEntityChange {
  id: number;
  entityName: string;
  type: number;
  entityId: number;
  initiatorPartyId: number;
}

/** The group of a change's webhooks within a grouped registration: all changes of one entity. */
export function groupKeyOf(change: { entityName: string; entityId: number }): string {
  return `${change.entityName}:${change.entityId}`;
}

/**
 * The fan-out of one change, after the CTE `change` that yields its id: one webhook per
 * subscription (`webhook_subscriptions`: the registrations of the initiator's party), narrowed by
 * `only` (a replay's registration). Grouped registrations upsert their `webhook_groups` row first:
 * the upsert row-locks the group until commit, so producers of one group serialise and
 * `group_seq` follows commit order; the new webhook is the group's head (Created) when it is the
 * only open one, else it waits (Pending) behind the open ones. Group rows are upserted in
 * registration order, so writers of the same entity cannot deadlock on them. When it created
 * webhooks, the statement queues the NOTIFY that wakes the dispatchers on commit. Enqueue and
 * replay run this one statement, so a replayed change enters its group exactly as a new one does.
 */
const fanOut = (change: string, only = '', traced = false) =>
  `with change as (${change}),
   subscriptions as (
     select s.registration_id, s.should_group, s.event_id
       from webhook_subscriptions(:partyId, :entityName, :type) s
       ${only}
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
     insert into webhooks (registration_id, event_id, entity_change_id, state, group_key, group_seq, last_action_id${traced ? ', trace_context' : ''})
     select s.registration_id, s.event_id, change.id,
            case when g.open_count > 1 then ${WebhookState.Pending} else ${WebhookState.Created} end,
            case when s.should_group then :groupKey end,
            g.next_seq, :actionId::bigint${traced ? ', :traceContext::jsonb' : ''}
       from subscriptions s
       cross join change
       left join groups g on g.registration_id = s.registration_id
     returning 1
   ),
   counted as (select count(*)::int as count from inserted)
   -- wakes the dispatchers on commit; Postgres folds a transaction's identical notifications
   -- into one, so a transaction of many changes still sends a single NOTIFY
   select count, (select true from pg_notify(:channel, '') where count > 0) as notified from counted`;

const RECORD_CHANGE = `insert into entity_changes (entity_name, type, entity_id, entity, initiator_party_id, initiator_account_id)
   values (:entityName, :type, :entityId, :entity, :partyId, :accountId)
   returning id`;

const ENQUEUE = fanOut(RECORD_CHANGE);

/** `ENQUEUE` that also stores the writer's trace context with each webhook (tracing on). */
const ENQUEUE_TRACED = fanOut(RECORD_CHANGE, '', true);

const REPLAY = fanOut('select :changeId::bigint as id', 'where s.registration_id = :registrationId');

/**
 * Records a change and fans it out, in one statement, to one webhook per live registration of the
 * initiator's party subscribed to (entityName, type) (`webhook_subscriptions`), grouped as each registration
 * groups (see `fanOut`). A registration deleted while this runs may still get a webhook; the
 * claim aborts such webhooks instead of delivering them. Returns how many webhooks were created.
 */
export async function enqueueEntityChange(trx: Knex.Transaction, change: EntityChangeInput): Promise<number> {
  const { rows } = await trx.raw<{ rows: { count: number }[] }>(
    change.traceContext ? ENQUEUE_TRACED : ENQUEUE,
    enqueueBindings(change),
  );
  return rows[0]?.count ?? 0;
}

/** The named bindings (`:name`) of `ENQUEUE_ENTITY_CHANGE_SQL` for `change`. */
export function enqueueBindings(change: EntityChangeInput): Record<string, unknown> {
  return {
    entityName: change.entityName,
    type: change.type,
    entityId: change.entityId,
    entity: JSON.stringify(change.entity),
    partyId: change.initiatorPartyId,
    accountId: change.initiatorAccountId,
    groupKey: groupKeyOf(change),
    actionId: null,
    channel: WEBHOOK_DUE_CHANNEL,
    ...(change.traceContext ? { traceContext: JSON.stringify(change.traceContext) } : {}),
  };
}

/**
 * The statement of `enqueueEntityChange`, with knex's named bindings (`:name`, see
 * `enqueueBindings`): for a client other than knex, such as the bench's bare handler, which must
 * run exactly the API's fan-out.
 */
export const ENQUEUE_ENTITY_CHANGE_SQL = ENQUEUE;

/**
 * Fans a recorded change out again to registration `registrationId` alone, with the statement of
 * `enqueueEntityChange`: a new webhook referencing the same change (so the same body), in its
 * group behind the group's open webhooks, when the registration would receive the change now
 * (live, subscribed, of the initiator's party). `actionId` is the operator action it is recorded
 * under. Returns how many webhooks were created (0 or 1).
 */
export async function replayEntityChange(
  trx: Knex.Transaction,
  change: RecordedEntityChange,
  registrationId: number,
  actionId: number | null,
): Promise<number> {
  const { rows } = await trx.raw<{ rows: { count: number }[] }>(REPLAY, {
    changeId: change.id,
    registrationId,
    entityName: change.entityName,
    type: change.type,
    partyId: change.initiatorPartyId,
    groupKey: groupKeyOf(change),
    actionId,
    channel: WEBHOOK_DUE_CHANNEL,
  });
  return rows[0]?.count ?? 0;
}
