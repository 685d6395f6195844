import type { WebhookNotificationSettingsWrite } from '@platform/shared';
import { DEFAULT_BREAKER_OPEN_MINUTES, type WebhookNotificationSettingsRead } from '@platform/shared';
import type { Knex } from '@platform/db';
import type { z } from 'zod';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { requireVisibleParty } from '../../http/scope';
import { recordOperatorAction } from '../operator-actions/operator-action-service';
import { checkTargetAllowed, newSigningSecret } from '../webhook-registrations/webhook-registration-service';

interface SettingsRow {
  party_id: number;
  emails: string[] | null;
  webhook_url: string | null;
  webhook_secret: string | null;
  breaker_open_minutes: number;
  last_modified: Date;
}

async function present(
  knex: Knex | Knex.Transaction,
  partyId: number,
  row: SettingsRow | undefined,
): Promise<WebhookNotificationSettingsRead> {
  // who is mailed is the database's one rule (webhook_notification_recipients), read back here
  const recipients = (
    await knex.raw<{ rows: { email: string }[] }>(
      'select r as email from webhook_notification_recipients(?) r order by 1',
      [partyId],
    )
  ).rows.map((r) => r.email);
  return {
    partyId,
    emails: row?.emails ?? null,
    recipients,
    webhookUrl: row?.webhook_url ?? null,
    breakerOpenMinutes: row?.breaker_open_minutes ?? DEFAULT_BREAKER_OPEN_MINUTES,
    lastModified: row ? row.last_modified.toISOString() : null,
  };
}

/** `GET /api/webhook-notifications/{partyId}`: the party's settings, or the defaults. */
export async function readNotificationSettings(
  deps: AppDeps,
  principal: Principal,
  partyId: number,
): Promise<WebhookNotificationSettingsRead> {
  await requireVisibleParty(deps.knex, principal, partyId);
  const row: SettingsRow | undefined = await deps
    .knex('webhook_notification_settings')
    .where({ party_id: partyId })
    .first();
  return present(deps.knex, partyId, row);
}

/**
 * `PUT /api/webhook-notifications/{partyId}`: replaces the party's settings, audited as
 * `notifications.update` in the same transaction. The operator webhook's signing secret is
 * created when a URL is first set (answered this once) and kept while a URL stays set.
 */
export async function writeNotificationSettings(
  deps: AppDeps,
  principal: Principal,
  partyId: number,
  body: z.output<typeof WebhookNotificationSettingsWrite>,
): Promise<WebhookNotificationSettingsRead> {
  await requireVisibleParty(deps.knex, principal, partyId);
  if (body.webhookUrl !== null) checkTargetAllowed(deps, body.webhookUrl, 'webhookUrl');
  const emails = body.emails === null ? null : [...new Set(body.emails.map((email) => email.toLowerCase()))];
  return deps.knex.transaction(async (trx) => {
    const before: SettingsRow | undefined = await trx('webhook_notification_settings')
      .where({ party_id: partyId })
      .forUpdate()
      .first();
    let signingSecret: string | undefined;
    let sealed: string | null = null;
    if (body.webhookUrl !== null) {
      if (before?.webhook_secret) sealed = before.webhook_secret;
      else {
        signingSecret = newSigningSecret();
        sealed = deps.secrets.seal(signingSecret);
      }
    }
    const [row] = (await trx('webhook_notification_settings')
      .insert({
        party_id: partyId,
        emails,
        webhook_url: body.webhookUrl,
        webhook_secret: sealed,
        breaker_open_minutes: body.breakerOpenMinutes,
        last_modified: trx.fn.now(),
        last_modified_by_account_id: principal.accountId === 0 ? null : principal.accountId,
      })
      .onConflict('party_id')
      .merge()
      .returning('*')) as SettingsRow[];
    await recordOperatorAction(trx, principal, {
      action: 'notifications.update',
      detail: {
        partyId,
        emails,
        webhookUrl: body.webhookUrl,
        breakerOpenMinutes: body.breakerOpenMinutes,
        ...(signingSecret ? { newSigningSecret: true } : {}),
      },
    });
    const read = await present(trx, partyId, row);
    return signingSecret ? { ...read, signingSecret } : read;
  });
}
