import type { Knex } from 'knex';
import { holdsGroup, WebhookState } from '@platform/shared';
import { notifyWebhookDue } from '../notify';
import { leaveGroups } from './leave-groups';
import type { LockedWebhook } from './lock-webhook';
import { releaseGroups } from './release-groups';

/**
 * An operator ends a webhook locked by `lockWebhook` as Aborted or Resolved: never retried. A
 * webhook that holds its group releases it (the next Pending becomes due, and the dispatchers are
 * woken); a Pending one just leaves the chain. The caller has checked that the state machine
 * allows it (a final webhook cannot end again).
 */
export async function endLockedWebhook(
  trx: Knex.Transaction,
  webhook: LockedWebhook,
  outcome: typeof WebhookState.Aborted | typeof WebhookState.Resolved,
  now: Date,
): Promise<void> {
  await trx('webhooks').where({ id: webhook.id }).update({
    state: outcome,
    completed_at: now,
    last_modified: now,
    // a dispatcher delivering it right now can no longer complete it (its update checks the lease)
    locked_by: null,
  });
  if (webhook.group_key === null) return;
  const group = [{ registrationId: webhook.registration_id, groupKey: webhook.group_key }];
  if (webhook.state === WebhookState.Pending) {
    await leaveGroups(trx, group);
  } else if (holdsGroup(webhook.state, webhook.continue_after_fail)) {
    const promoted = await releaseGroups(trx, group);
    if (promoted.length > 0) await notifyWebhookDue(trx);
  }
}
