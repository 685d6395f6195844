import { WEBHOOK_USER_AGENT, WebhookAuthType } from '@platform/shared';

/** Stands in for a secret the console never sees. */
export const MASK = '••••••••';

export interface SentHeader {
  name: string;
  value: string;
  /** The value is a secret (or derived from one) and is shown masked. */
  masked: boolean;
  note?: string;
}

/**
 * The headers a delivery of webhook `webhookId` carries (docs/webhooks.md#the-delivery-request), rebuilt from what the
 * console knows: secrets and the signature are masked, `webhook-timestamp` is that of the attempt
 * at `attemptStartedAt` (each attempt signs afresh). `authType` undefined: the registration is
 * gone or unreadable, so the authorization header is unknown.
 */
export function deliveryHeaders(input: {
  webhookId: number;
  authType: number | undefined;
  attemptStartedAt?: string;
}): SentHeader[] {
  const timestamp = input.attemptStartedAt
    ? String(Math.floor(Date.parse(input.attemptStartedAt) / 1000))
    : undefined;
  const headers: SentHeader[] = [
    { name: 'content-type', value: 'application/json', masked: false },
    { name: 'user-agent', value: WEBHOOK_USER_AGENT, masked: false },
    { name: 'webhook-id', value: String(input.webhookId), masked: false, note: 'Stable across retries.' },
    {
      name: 'webhook-timestamp',
      value: timestamp ?? '(set at each attempt)',
      masked: false,
      note: timestamp
        ? 'Of the latest attempt (approximately its start); each attempt sends its own.'
        : undefined,
    },
    {
      name: 'webhook-signature',
      value: `v1,${MASK}`,
      masked: true,
      note: 'HMAC-SHA256 of id.timestamp.body with the signing secret.',
    },
  ];
  switch (input.authType) {
    case WebhookAuthType.BasicAuth:
      headers.push({ name: 'authorization', value: `Basic ${MASK}`, masked: true });
      break;
    case WebhookAuthType.PlatformBearerInHeader:
      headers.push({
        name: 'authorization',
        value: `Bearer ${MASK}`,
        masked: true,
        note: 'A platform-signed JWT (30 min), readable with the JWKS.',
      });
      break;
    case WebhookAuthType.TargetApiToken:
      headers.push({ name: 'x-api-key', value: MASK, masked: true });
      break;
    case undefined:
      headers.push({
        name: 'authorization',
        value: '(unknown)',
        masked: true,
        note: 'The registration cannot be read, so its authorization type is unknown.',
      });
      break;
  }
  return headers;
}
