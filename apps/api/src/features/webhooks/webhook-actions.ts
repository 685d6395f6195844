import { webhookStateName, type BulkWebhookAction, type WebhookRead } from '@platform/shared';
import { applyOperatorAction, resendWebhook, type Knex } from '@platform/db';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { AppError } from '../../http/errors';
import { recordOperatorAction } from '../operator-actions/operator-action-service';
import { runWrite } from '../../write-path';
import { retryOnDeadlock } from './deadlock-retry';
import { presentWebhook } from './webhook-presenter';
import { findWebhook, visibleWebhooks } from './webhook-service';

// the name alone: an operator reads "Resolved", not the number the API stores
const stateName = (state: number) => webhookStateName(state);

async function answer(trx: Knex.Transaction, principal: Principal, id: number): Promise<WebhookRead> {
  return presentWebhook(await visibleWebhooks(trx, principal).where('w.id', id).first());
}

const ENDED = { abort: 'aborted', resolve: 'resolved', retry: 'retried' } as const;

/**
 * An operator's action on one webhook the caller may see (404 otherwise), audited:
 * - abort / resolve: a webhook that is not final (Created, Retrying, Failed, Pending) ends as
 *   Aborted / Resolved, never retried. A group's head releases its group (the next Pending becomes
 *   due); a Pending webhook just leaves the chain. A final webhook is a 409.
 * - retry: a Failed webhook gets one more attempt: Retrying, due now, its attempt count kept (or
 *   Pending, behind the open webhooks of a group it had released). An open breaker of its target
 *   half-opens: the next delivery is the trial. Any other state, or a webhook of a deleted
 *   registration, is a 409.
 * The rules are `webhooks_operator_apply`'s, the same a bulk operation's batches use.
 */
export function actOnWebhook(
  deps: AppDeps,
  principal: Principal,
  id: number,
  action: BulkWebhookAction,
): Promise<WebhookRead> {
  return retryOnDeadlock(() =>
    runWrite(deps, principal, async ({ trx, now }) => {
      const webhook = await findWebhook(trx, principal, id);
      const actionId = await recordOperatorAction(trx, principal, {
        action: `webhook.${action}`,
        registrationId: webhook.registration_id,
        webhookId: id,
        changed: 1,
      });
      const outcome = (await applyOperatorAction(trx, { action, ids: [id], actionId, now })).get(id);
      if (outcome !== 'changed') {
        const current = await findWebhook(trx, principal, id);
        if (outcome === 'registration-deleted') {
          throw new AppError('Conflict', `The registration of webhook ${id} was deleted`);
        }
        if (action === 'retry') {
          throw new AppError(
            'Conflict',
            `Only a Failed webhook can be retried; webhook ${id} is ${stateName(current.state)}`,
          );
        }
        throw new AppError(
          'Conflict',
          `Webhook ${id} is ${stateName(current.state)}, a final state; it can no longer be ${ENDED[action]}`,
        );
      }
      return answer(trx, principal, id);
    }),
  );
}

/**
 * Resends a Successful webhook the caller may see (404 otherwise), audited as `webhook.resend`:
 * a new webhook of the same registration with the same body, at the tail of its group
 * (`resendWebhook`). Answers the new webhook. A 409 when the webhook is not Successful, when a
 * later webhook of its group supersedes it (a resend would deliver an older state after a newer
 * one; docs/admin.md › Resend), or when its registration was deleted or no longer subscribes to
 * its event.
 */
export function resendWebhookOf(deps: AppDeps, principal: Principal, id: number): Promise<WebhookRead> {
  return retryOnDeadlock(() =>
    runWrite(deps, principal, async ({ trx }) => {
      const webhook = await findWebhook(trx, principal, id);
      const actionId = await recordOperatorAction(trx, principal, {
        action: 'webhook.resend',
        registrationId: webhook.registration_id,
        webhookId: id,
        changed: 1,
      });
      const resent = await resendWebhook(trx, { webhookId: id, actionId });
      switch (resent.outcome) {
        case 'resent':
          await trx('operator_actions')
            .where({ id: actionId })
            .update({
              detail: trx.raw(`detail || jsonb_build_object('resentAs', ?::bigint)`, [resent.webhookId]),
            });
          return answer(trx, principal, resent.webhookId);
        case 'not-successful':
          throw new AppError(
            'Conflict',
            `Only a Successful webhook can be resent; webhook ${id} is ${stateName(resent.state)}`,
          );
        case 'superseded':
          throw new AppError(
            'Conflict',
            `Webhook ${id} is position ${resent.groupSeq} of group ${resent.groupKey}, whose latest webhook ` +
              `is position ${resent.latestSeq}: resending it would deliver an older state after a newer one. ` +
              'Resend the group’s latest webhook instead.',
          );
        case 'registration-deleted':
          throw new AppError('Conflict', `The registration of webhook ${id} was deleted`);
        case 'not-subscribed':
          throw new AppError(
            'Conflict',
            `The registration of webhook ${id} no longer subscribes to its event (or is not of the initiator’s party)`,
          );
        case 'not-found':
          throw new AppError('NotFound', `Webhook ${id} was not found`);
      }
    }),
  );
}
