import type { Knex } from 'knex';
import { WebhookState } from '@platform/shared';
import { notifyWebhookDue } from '../notify';
import type { LockedWebhook } from './lock-webhook';

/**
 * An operator gives a Failed webhook locked by `lockWebhook` one more attempt: Retrying, due now,
 * its attempt count kept. A Failed webhook of a continue-after-fail registration already released
 * its group, so it re-enters it (one more open webhook, under the group lock `lockWebhook` holds):
 * due now when the group has no other open webhook, else Pending, next in line by its place in
 * the group. The caller has checked that the state machine allows it. Returns the new state.
 */
export async function retryLockedWebhook(
  trx: Knex.Transaction,
  webhook: LockedWebhook,
  now: Date,
): Promise<typeof WebhookState.Retrying | typeof WebhookState.Pending> {
  let state: typeof WebhookState.Retrying | typeof WebhookState.Pending = WebhookState.Retrying;
  if (webhook.group_key !== null && webhook.continue_after_fail) {
    const [group] = (await trx('webhook_groups')
      .where({ registration_id: webhook.registration_id, group_key: webhook.group_key })
      .increment('open_count', 1)
      .returning('open_count')) as { open_count: number }[];
    if (group!.open_count > 1) state = WebhookState.Pending;
  }
  await trx('webhooks').where({ id: webhook.id }).update({
    state,
    // due by the database clock, which the dispatcher's claim compares with
    next_attempt_at: trx.fn.now(),
    completed_at: null,
    last_modified: now,
    locked_by: null,
  });
  if (state === WebhookState.Retrying) await notifyWebhookDue(trx);
  return state;
}
