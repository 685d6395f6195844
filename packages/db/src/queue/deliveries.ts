import { deliveryEventFields } from '../delivery-body';
import type { ClaimedWebhook } from './claim';

/** `webhook_deliveries`' answer (`functions/webhook-deliveries.ts`): each shared row once. */
export interface DeliveriesAnswer {
  webhooks: {
    id: number;
    registration_id: number;
    attempt: number;
    group_key: string | null;
    change_id: number;
    event_id: number;
    trace_context: ClaimedWebhook['trace_context'];
    interrupted: boolean;
    /** Whether it is delivered with its entity (not interrupted, not recorded without a request). */
    payload: boolean;
  }[];
  changes: {
    id: number;
    /** Null when only webhooks without `payload` need the change. */
    entity: unknown;
    initiator_party_id: number;
    initiator_account_id: number | null;
  }[];
  registrations: {
    id: number;
    target_id: number;
    origin: string;
    target_url: string;
    auth_type: number;
    auth_credentials: string | null;
    signing_secret: string;
    party_id: number;
    previous_signing_secret: string | null;
    should_group_continue_after_fail: boolean;
    deleted: boolean;
  }[];
  events: {
    id: number;
    type: number;
    entity_name: string;
    created: string;
    last_modified: string | null;
    deleted: string | null;
  }[];
}

const byId = <T extends { id: number }>(rows: readonly T[]): Map<number, T> =>
  new Map(rows.map((row) => [row.id, row]));

/**
 * The deliveries of a claim or a completion, one `ClaimedWebhook` per webhook in the answer's
 * order, from `webhook_deliveries`' answer. Webhooks of one change share its entity object: a
 * delivery reads it and never changes it.
 */
export function readDeliveries(answer: DeliveriesAnswer): ClaimedWebhook[] {
  if (answer.webhooks.length === 0) return [];
  const changes = byId(answer.changes);
  const registrations = byId(answer.registrations);
  const events = byId(answer.events);
  return answer.webhooks.map((webhook) => {
    const change = changes.get(webhook.change_id)!;
    const registration = registrations.get(webhook.registration_id)!;
    const event = events.get(webhook.event_id)!;
    return {
      id: webhook.id,
      registration_id: webhook.registration_id,
      target_id: registration.target_id,
      origin: registration.origin,
      attempt: webhook.attempt,
      group_key: webhook.group_key,
      target_url: registration.target_url,
      auth_type: registration.auth_type,
      auth_credentials: registration.auth_credentials,
      signing_secret: registration.signing_secret,
      previous_signing_secret: registration.previous_signing_secret,
      registration_party_id: registration.party_id,
      should_group_continue_after_fail: registration.should_group_continue_after_fail,
      registration_deleted: registration.deleted,
      interrupted: webhook.interrupted,
      entity: webhook.payload ? change.entity : null,
      initiator_party_id: change.initiator_party_id,
      initiator_account_id: change.initiator_account_id,
      ...deliveryEventFields(event),
      trace_context: webhook.trace_context,
    };
  });
}
