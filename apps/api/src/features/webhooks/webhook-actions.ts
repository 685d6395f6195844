import { operatorActionAllowed, WebhookState, webhookStateName, type WebhookRead } from '@platform/shared';
import {
  endLockedWebhook,
  halfOpenTargetOf,
  lockWebhook,
  retryLockedWebhook,
  type Knex,
  type LockedWebhook,
} from '@platform/db';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { AppError } from '../../http/errors';
import { runWrite } from '../write-path';
import { retryOnDeadlock } from './deadlock-retry';
import { presentWebhook } from './webhook-presenter';
import { findWebhook, visibleWebhooks } from './webhook-service';

const stateName = (state: number) => `${webhookStateName(state)} (${state})`;

/** Locks a webhook the caller may see (404 otherwise) for an operator action, its group first. */
async function lockVisibleWebhook(
  trx: Knex.Transaction,
  principal: Principal,
  id: number,
): Promise<LockedWebhook> {
  return lockWebhook(trx, await findWebhook(trx, principal, id));
}

async function answer(trx: Knex.Transaction, principal: Principal, id: number): Promise<WebhookRead> {
  return presentWebhook(await visibleWebhooks(trx, principal).where('w.id', id).first());
}

/**
 * Ends a webhook that is not final (Created, Retrying, Failed, Pending) as Aborted or Resolved:
 * never retried. A group's head releases its group (the next Pending becomes due); a Pending
 * webhook just leaves the chain. A final webhook is a 409.
 */
export function endWebhook(
  deps: AppDeps,
  principal: Principal,
  id: number,
  outcome: typeof WebhookState.Aborted | typeof WebhookState.Resolved,
): Promise<WebhookRead> {
  const [action, ended] =
    outcome === WebhookState.Aborted ? (['abort', 'aborted'] as const) : (['resolve', 'resolved'] as const);
  return retryOnDeadlock(() =>
    runWrite(deps, principal, async ({ trx, now }) => {
      const webhook = await lockVisibleWebhook(trx, principal, id);
      if (!operatorActionAllowed(action, webhook.state)) {
        throw new AppError(
          'Conflict',
          `Webhook ${id} is ${stateName(webhook.state)}, a final state; it can no longer be ${ended}`,
        );
      }
      await endLockedWebhook(trx, webhook, outcome, now);
      return answer(trx, principal, id);
    }),
  );
}

/**
 * Gives a Failed webhook one more attempt: Retrying, due now, its attempt count kept (or Pending,
 * behind the open webhooks of a group it had released). The operator says the endpoint is fixed,
 * so an open breaker of its target half-opens in the same transaction: the next delivery is the
 * trial, with no cool-down to wait out. Anything but Failed, or a webhook of a deleted
 * registration, is a 409.
 */
export function retryWebhook(deps: AppDeps, principal: Principal, id: number): Promise<WebhookRead> {
  return retryOnDeadlock(() =>
    runWrite(deps, principal, async ({ trx, now }) => {
      const webhook = await lockVisibleWebhook(trx, principal, id);
      if (!operatorActionAllowed('retry', webhook.state)) {
        throw new AppError(
          'Conflict',
          `Only a Failed webhook can be retried; webhook ${id} is ${stateName(webhook.state)}`,
        );
      }
      if (webhook.registration_deleted !== null) {
        throw new AppError('Conflict', `The registration of webhook ${id} was deleted`);
      }
      await retryLockedWebhook(trx, webhook, now);
      await halfOpenTargetOf(trx, webhook.registration_id);
      return answer(trx, principal, id);
    }),
  );
}
