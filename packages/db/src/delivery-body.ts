import type { WebhookDeliveryBody } from '@platform/shared';

/** The columns of an `entity_changes` row a delivery carries. */
export interface DeliveryChangeRow {
  entity: unknown;
  initiator_party_id: number;
  initiator_account_id: number | null;
}

/** The `webhook_events` row of the subscription a webhook fulfils: the delivery's `event`. */
export interface DeliveryEventRow {
  id: number;
  type: number;
  entity_name: string;
  created: Date | string | null;
  last_modified: Date | string | null;
  deleted: Date | string | null;
}

/**
 * A subscribed event as the `event_*` fields of a delivery (`ClaimedWebhook`, and the API's test
 * event's message): the one mapping of a `webhook_events` row onto them.
 */
export function deliveryEventFields<Event extends DeliveryEventRow>(event: Event) {
  return {
    event_id: event.id,
    event_type: event.type,
    event_entity_name: event.entity_name,
    event_created: event.created as Event['created'],
    event_last_modified: event.last_modified as Event['last_modified'],
    event_deleted: event.deleted as Event['deleted'],
  };
}

const iso = (value: Date | string | null): string | null =>
  value instanceof Date ? value.toISOString() : value === null ? null : new Date(value).toISOString();

/**
 * The body of a delivery (docs/webhooks.md#the-delivery-request): the entity as change capture recorded it, the
 * subscribed WebhookEvent, and who made the change; `platformSignedBearerToken` only for
 * authorization type 3. The one place that shapes it, so what the operator API shows is what the
 * dispatcher sends.
 */
export function deliveryBody(
  change: DeliveryChangeRow,
  event: DeliveryEventRow,
  options: { platformSignedBearerToken?: string } = {},
): WebhookDeliveryBody {
  return {
    entity: change.entity as Record<string, unknown>,
    event: {
      id: event.id,
      type: event.type,
      entityName: event.entity_name,
      created: iso(event.created),
      lastModified: iso(event.last_modified),
      deleted: iso(event.deleted),
    },
    initiatorPartyId: change.initiator_party_id,
    initiatorAccountId: change.initiator_account_id,
    ...(options.platformSignedBearerToken === undefined
      ? {}
      : { platformSignedBearerToken: options.platformSignedBearerToken }),
  };
}
