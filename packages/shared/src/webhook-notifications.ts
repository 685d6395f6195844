import { z } from 'zod';
import { TargetUrl } from './webhooks';

/**
 * Notifications to operators (docs/admin.md#notifications): per party, who is told that one of
 * its registrations was disabled, or that an endpoint's breaker stayed open, by mail (the mail
 * outbox) and by an optional operator webhook, signed like every delivery (Standard Webhooks).
 */

const timestamp = z.iso.datetime({ offset: true });

/** How long a breaker stays open before it is told, when the party set nothing. */
export const DEFAULT_BREAKER_OPEN_MINUTES = 15;
/** The longest wait for a breaker that a party may set: a day. */
export const MAX_BREAKER_OPEN_MINUTES = 1440;
/** The most addresses a party may list. */
export const MAX_NOTIFICATION_EMAILS = 20;

/** What an operator notification is about: its mail's `kind` (`webhook-` + it) and its webhook's `type`. */
export const OPERATOR_NOTIFICATION_KINDS = ['registration-disabled', 'breaker-open'] as const;
export type OperatorNotificationKind = (typeof OPERATOR_NOTIFICATION_KINDS)[number];

const email = z
  .string()
  .trim()
  .max(254, 'an address must be at most 254 characters')
  .pipe(z.email({ error: 'must be an email address' }));

/** `PUT /api/webhook-notifications/{partyId}`: the whole of a party's settings. */
export const WebhookNotificationSettingsWrite = z
  .strictObject({
    emails: z
      .array(email)
      .max(MAX_NOTIFICATION_EMAILS, `emails may list at most ${MAX_NOTIFICATION_EMAILS} addresses`)
      .nullable()
      .meta({
        description:
          'Who is mailed. null: the party’s accounts holding a Webhook permission (the default); ' +
          '`[]`: nobody.',
      }),
    webhookUrl: TargetUrl.nullable().meta({
      description:
        'The operator webhook: a signed POST (Standard Webhooks) of each notification. null: none. ' +
        'Its signing secret is created the first time a URL is set and answered only then.',
    }),
    breakerOpenMinutes: z
      .number()
      .int('breakerOpenMinutes must be a whole number of minutes')
      .min(1, 'breakerOpenMinutes must be at least 1')
      .max(MAX_BREAKER_OPEN_MINUTES, `breakerOpenMinutes must be at most ${MAX_BREAKER_OPEN_MINUTES} (a day)`)
      .default(DEFAULT_BREAKER_OPEN_MINUTES)
      .meta({
        description:
          'How long an endpoint’s breaker stays open before the operators are told (once per opening).',
      }),
  })
  .meta({ id: 'WebhookNotificationSettingsWrite' });
export type WebhookNotificationSettingsWrite = z.input<typeof WebhookNotificationSettingsWrite>;

/** A party's settings as read: the defaults when it set none. */
export const WebhookNotificationSettingsRead = z
  .strictObject({
    partyId: z.number().int(),
    emails: z.array(z.string()).nullable(),
    /** Who a mail goes to now: `emails`, or the default recipients. */
    recipients: z.array(z.string()).meta({ description: 'Who a notification mail goes to now.' }),
    webhookUrl: z.string().nullable(),
    breakerOpenMinutes: z.number().int(),
    lastModified: timestamp.nullable().meta({ description: 'null: the party never set them.' }),
    signingSecret: z.string().optional().meta({
      description:
        'The operator webhook’s new signing secret (`whsec_…`): only in the answer that created it.',
    }),
  })
  .meta({ id: 'WebhookNotificationSettingsRead' });
export type WebhookNotificationSettingsRead = z.infer<typeof WebhookNotificationSettingsRead>;
