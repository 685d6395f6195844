import type { Knex } from 'knex';
import type { WebhookRegistrationStatus } from '@platform/shared';
import { notifyDeliveriesStopped, notifyWebhookDue } from '../notify';

/**
 * An operator says a registration's endpoint is fixed (a resume, a retry, a recover, a test
 * event): its target's breaker half-opens at once, so the next delivery is the trial, with no
 * cool-down to wait out. A closed breaker is left alone. The rule is SQL's `webhook_target_half_open`
 * (`functions/webhook-target-half-open.ts`), which `webhooks_operator_apply` uses too.
 */
export async function halfOpenTargetOf(trx: Knex | Knex.Transaction, registrationId: number): Promise<void> {
  await trx.raw('select webhook_target_half_open(?)', [registrationId]);
}

/**
 * Pauses a registration: its webhooks are still written, none is claimed, no attempt is spent
 * (deliveries in flight finish; what a dispatcher buffered is handed back, uncounted, on the
 * `stopped` notification). Pausing a paused registration changes nothing; pausing a disabled
 * one makes it paused (the operator took it over). Returns whether the status changed.
 */
export async function pauseRegistration(
  trx: Knex.Transaction,
  registrationId: number,
  now: Date,
): Promise<boolean> {
  const changed = await trx('webhook_registrations')
    .where({ id: registrationId })
    .whereNot({ status: 'paused' satisfies WebhookRegistrationStatus })
    .update({ status: 'paused', disabled_reason: null, status_changed: now, last_modified: now });
  if (changed > 0) await notifyDeliveriesStopped(trx);
  return changed > 0;
}

/**
 * Resumes a paused or disabled registration: active again, its failing run forgotten (so the
 * sustained-failure rule starts afresh), its target's breaker half-opened, and the dispatchers
 * woken; its waiting webhooks go out, each group in order. Returns whether the status changed.
 */
export async function resumeRegistration(
  trx: Knex.Transaction,
  registrationId: number,
  now: Date,
): Promise<boolean> {
  const changed = await trx('webhook_registrations')
    .where({ id: registrationId })
    .whereNot({ status: 'active' satisfies WebhookRegistrationStatus })
    .update({
      status: 'active',
      disabled_reason: null,
      status_changed: now,
      failing_since: null,
      failures_since_success: 0,
      last_modified: now,
    });
  await halfOpenTargetOf(trx, registrationId);
  await notifyWebhookDue(trx);
  return changed > 0;
}
