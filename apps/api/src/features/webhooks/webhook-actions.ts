import { FINAL_WEBHOOK_STATES, WebhookState, type WebhookRead } from '@platform/shared';
import { leaveGroups, notifyWebhookDue, releaseGroups, type Knex } from '@platform/db';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { AppError } from '../../http/errors';
import { runWrite } from '../write-path';
import { retryOnDeadlock } from './deadlock-retry';
import { presentWebhook } from './webhook-presenter';
import { findWebhook, visibleWebhooks } from './webhook-service';

const STATE_NAMES = Object.fromEntries(Object.entries(WebhookState).map(([name, value]) => [value, name]));
const stateName = (state: number) => `${STATE_NAMES[state] ?? 'unknown'} (${state})`;

/** A webhook as an operator action sees it, locked. */
interface LockedWebhook {
  id: number;
  registration_id: number;
  state: number;
  group_key: string | null;
  /** Its registration lets later webhooks of the group go on after a failure. */
  continue_after_fail: boolean;
  registration_deleted: Date | null;
}

/**
 * Locks a visible webhook for an operator action, and first its group's row. The group row comes
 * first, as in enqueue and release, so this never waits on a webhook while a releaser of its
 * group waits on us; and, locked in a statement of its own, it makes every later statement of the
 * transaction see each webhook committed to the group so far (a single statement would keep the
 * snapshot it took before waiting for the lock, and could miss the Pending webhook to promote).
 */
async function lockWebhook(trx: Knex.Transaction, principal: Principal, id: number): Promise<LockedWebhook> {
  const found = await findWebhook(trx, principal, id);
  // a webhook's group never changes, so it can be read before the lock
  if (found.group_key !== null) {
    await trx('webhook_groups')
      .where({ registration_id: found.registration_id, group_key: found.group_key })
      .forUpdate()
      .first('open_count');
  }
  const locked: LockedWebhook | undefined = await trx('webhooks as w')
    .join('webhook_registrations as r', 'r.id', 'w.registration_id')
    .where('w.id', id)
    .forUpdate('w')
    .first(
      'w.id',
      'w.registration_id',
      'w.state',
      'w.group_key',
      'r.should_group_continue_after_fail as continue_after_fail',
      'r.deleted as registration_deleted',
    );
  return locked!;
}

/** Whether `webhook` holds its group: a head (Created, Retrying) or a Failed one that blocks it. */
function holdsGroup(webhook: LockedWebhook): boolean {
  if (webhook.state === WebhookState.Created || webhook.state === WebhookState.Retrying) return true;
  // a Failed webhook of a continue-after-fail registration released its group when it failed
  return webhook.state === WebhookState.Failed && !webhook.continue_after_fail;
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
  return retryOnDeadlock(() =>
    runWrite(deps, principal, async ({ trx, now }) => {
      const webhook = await lockWebhook(trx, principal, id);
      if (FINAL_WEBHOOK_STATES.includes(webhook.state as WebhookState)) {
        throw new AppError(
          'Conflict',
          `Webhook ${id} is ${stateName(webhook.state)}, a final state; it can no longer be ${
            outcome === WebhookState.Aborted ? 'aborted' : 'resolved'
          }`,
        );
      }
      await trx('webhooks').where({ id }).update({
        state: outcome,
        completed_at: now,
        last_modified: now,
        // a dispatcher delivering it right now can no longer complete it (its update checks the lease)
        locked_by: null,
      });
      if (webhook.group_key !== null) {
        const group = [{ registrationId: webhook.registration_id, groupKey: webhook.group_key }];
        if (webhook.state === WebhookState.Pending) {
          await leaveGroups(trx, group);
        } else if (holdsGroup(webhook)) {
          const promoted = await releaseGroups(trx, group);
          if (promoted.length > 0) await notifyWebhookDue(trx);
        }
      }
      return answer(trx, principal, id);
    }),
  );
}

/**
 * Gives a Failed webhook one more attempt: Retrying, due now, its attempt count kept. A Failed
 * webhook of a continue-after-fail registration already released its group, so it re-enters it:
 * due now when the group has no other open webhook, else Pending, next in line by its place in
 * the group. Anything but Failed, or a webhook of a deleted registration, is a 409.
 */
export function retryWebhook(deps: AppDeps, principal: Principal, id: number): Promise<WebhookRead> {
  return retryOnDeadlock(() =>
    runWrite(deps, principal, async ({ trx, now }) => {
      const webhook = await lockWebhook(trx, principal, id);
      if (webhook.state !== WebhookState.Failed) {
        throw new AppError(
          'Conflict',
          `Only a Failed webhook can be retried; webhook ${id} is ${stateName(webhook.state)}`,
        );
      }
      if (webhook.registration_deleted !== null) {
        throw new AppError('Conflict', `The registration of webhook ${id} was deleted`);
      }
      let state: WebhookState = WebhookState.Retrying;
      if (webhook.group_key !== null && webhook.continue_after_fail) {
        const [group] = (await trx('webhook_groups')
          .where({ registration_id: webhook.registration_id, group_key: webhook.group_key })
          .increment('open_count', 1)
          .returning('open_count')) as { open_count: number }[];
        if (group!.open_count > 1) state = WebhookState.Pending;
      }
      await trx('webhooks').where({ id }).update({
        state,
        // due by the database clock, which the dispatcher's claim compares with
        next_attempt_at: trx.fn.now(),
        completed_at: null,
        last_modified: now,
        locked_by: null,
      });
      if (state === WebhookState.Retrying) await notifyWebhookDue(trx);
      return answer(trx, principal, id);
    }),
  );
}
