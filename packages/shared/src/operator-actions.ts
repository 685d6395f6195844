import { z } from 'zod';

const timestamp = z.iso.datetime({ offset: true });

/** What operators do, as the audit trail names it. */
export const OPERATOR_ACTION_NAMES = [
  'webhook.abort',
  'webhook.resolve',
  'webhook.retry',
  'webhook.resend',
  'webhooks.bulk-retry',
  'webhooks.bulk-abort',
  'webhooks.bulk-resolve',
  'registration.recover',
  'registration.replay',
  'registration.test',
  'registration.rotate-secret',
  'registration.pause',
  'registration.resume',
  'registration.create',
  'registration.update-target',
  'registration.delete',
  'account.mfa-skip',
  'portal-session.create',
  'portal-session.revoke',
  'notifications.update',
] as const;
export type OperatorActionName = (typeof OPERATOR_ACTION_NAMES)[number];

/** The last operator action on a webhook, shown on its read. */
export const WebhookLastAction = z
  .object({
    id: z.number().int(),
    action: z.enum(OPERATOR_ACTION_NAMES),
    accountId: z.number().int().nullable(),
    accountEmail: z
      .string()
      .nullable()
      .meta({
        description:
          'The acting account’s email, when its party is in the caller’s scope; null for the system and ' +
          'for another party’s accounts.',
      }),
    at: timestamp,
  })
  .meta({ id: 'WebhookLastAction' });
export type WebhookLastAction = z.infer<typeof WebhookLastAction>;
