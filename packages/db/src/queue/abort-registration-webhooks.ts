import type { Knex } from 'knex';
import { UNDELIVERED_WEBHOOK_STATES, WebhookState } from '@platform/shared';

/**
 * Aborts the undelivered webhooks (Created, Retrying, Failed, Pending) of a registration being
 * deleted, in its transaction; its groups then hold no open webhook. The groups are locked before
 * the webhooks (the order enqueue and release use), so a grouped change committed meanwhile is
 * seen and aborted. A change whose enqueue statement began before this commit can still add a
 * webhook afterwards (enqueue does not lock registrations): the claim aborts those instead of
 * delivering them. `lastActionId`: the audit row of the delete, recorded as their last action.
 * Answers how many it aborted. Every statement pins the registration's tenant bucket (R2).
 */
export async function abortRegistrationWebhooks(
  trx: Knex.Transaction,
  registration: { id: number; bucket: number },
  now: Date,
  lastActionId?: number,
): Promise<number> {
  const owned = { bucket: registration.bucket, registration_id: registration.id };
  await trx('webhook_groups').where(owned).orderBy('group_key').forUpdate().select('group_key');
  const aborted = await trx('webhooks')
    .where(owned)
    .whereIn('state', UNDELIVERED_WEBHOOK_STATES)
    .update({
      state: WebhookState.Aborted,
      completed_at: now,
      last_modified: now,
      // a dispatcher holding one of them can no longer complete it (its update checks the lease)
      locked_by: null,
      ...(lastActionId !== undefined && { last_action_id: lastActionId }),
    });
  await trx('webhook_groups').where(owned).update({ open_count: 0 });
  return aborted;
}
