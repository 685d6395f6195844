import type { Knex } from 'knex';

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
 * The fan-out of one change: one call of `webhooks_enqueue` (`functions/webhooks-enqueue.ts`),
 * which records the change (or takes a recorded one, `:changeId`), writes one webhook per
 * subscription (narrowed to `:registrationId` for a replay), each grouped registration's group row
 * upserted first, and queues the NOTIFY that wakes the dispatchers on commit. Enqueue and replay
 * run this one function, so a replayed change enters its group exactly as a new one does.
 */
const ENQUEUE = `select webhooks_enqueue(null, :entityName, :type::smallint, :entityId::int, :entity::jsonb,
   :partyId::int, :accountId::int, :groupKey, :actionId::bigint) as count`;

/** `ENQUEUE` that also stores the writer's trace context with each webhook (tracing on). */
const ENQUEUE_TRACED = `select webhooks_enqueue(null, :entityName, :type::smallint, :entityId::int, :entity::jsonb,
   :partyId::int, :accountId::int, :groupKey, :actionId::bigint, null, :traceContext::jsonb) as count`;

const REPLAY = `select webhooks_enqueue(:changeId::bigint, :entityName, :type::smallint, null, null,
   :partyId::int, null, :groupKey, :actionId::bigint, :registrationId::int) as count`;

/**
 * Records a change and fans it out, in one statement, to one webhook per live registration of the
 * initiator's party subscribed to (entityName, type) (`webhook_subscriptions`), grouped as each registration
 * groups (see `ENQUEUE`). A registration deleted while this runs may still get a webhook; the
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
    ...(change.traceContext ? { traceContext: JSON.stringify(change.traceContext) } : {}),
  };
}

/**
 * The statement of `enqueueEntityChange`, with knex's named bindings (`:name`, see
 * `enqueueBindings`): for a client other than knex, such as the bench's bare handler, which must
 * run exactly the API's fan-out.
 */
export const ENQUEUE_ENTITY_CHANGE_SQL = ENQUEUE;

/** Every statement of this module, for the Citus lint (`citus-lint.test.ts`). */
export const ENQUEUE_STATEMENTS = { enqueue: ENQUEUE, traced: ENQUEUE_TRACED, replay: REPLAY } as const;

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
  });
  return rows[0]?.count ?? 0;
}
