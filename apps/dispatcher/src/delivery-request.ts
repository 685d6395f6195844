import { createHmac } from 'node:crypto';
import { deliveryBody, type ClaimedWebhook, type SecretBox } from '@platform/db';
import { WebhookAuthType } from '@platform/shared';
import type { DeliveryRequest } from './deliver';

export const USER_AGENT = 'PlatformWebhooks/1.0 (+https://platform.example.com/docs/webhooks)';

/** Issues the service-signed bearer token a registration of auth type 2 or 3 carries. */
export type BearerTokenSource = (registration: { id: number; partyId: number }) => Promise<string>;

/** The Standard Webhooks signature of one message: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
export function signStandardWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * The HTTP request of one delivery (design part 4): the body of spec 6.2, the Standard Webhooks
 * headers (`webhook-id` is the webhook id, so a receiver dedupes retries and redeliveries), and
 * the registration's target authorization (spec 5.11).
 */
export async function buildDeliveryRequest(
  webhook: ClaimedWebhook,
  deps: { secrets: SecretBox; bearerToken: BearerTokenSource; now: () => Date },
): Promise<DeliveryRequest> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': USER_AGENT };
  let bearer: string | undefined;
  if (
    webhook.auth_type === WebhookAuthType.PlatformBearerInHeader ||
    webhook.auth_type === WebhookAuthType.PlatformBearerInBody
  ) {
    bearer = await deps.bearerToken({ id: webhook.registration_id, partyId: webhook.registration_party_id });
  }
  const credentials = webhook.auth_credentials
    ? JSON.parse(deps.secrets.open(webhook.auth_credentials))
    : undefined;
  switch (webhook.auth_type) {
    case WebhookAuthType.BasicAuth:
      headers.authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
      break;
    case WebhookAuthType.PlatformBearerInHeader:
      headers.authorization = `Bearer ${bearer}`;
      break;
    case WebhookAuthType.TargetApiToken:
      headers['x-api-key'] = credentials.apiKey;
      break;
  }
  const body = JSON.stringify(
    deliveryBody(
      {
        entity: webhook.entity,
        initiator_party_id: webhook.initiator_party_id,
        initiator_account_id: webhook.initiator_account_id,
      },
      {
        id: webhook.event_id,
        type: webhook.event_type,
        entity_name: webhook.event_entity_name,
        created: webhook.event_created,
        last_modified: webhook.event_last_modified,
        deleted: webhook.event_deleted,
      },
      webhook.auth_type === WebhookAuthType.PlatformBearerInBody ? { platformSignedBearerToken: bearer } : {},
    ),
  );
  const id = String(webhook.id);
  const timestamp = Math.floor(deps.now().getTime() / 1000);
  headers['webhook-id'] = id;
  headers['webhook-timestamp'] = String(timestamp);
  headers['webhook-signature'] = signStandardWebhook(
    deps.secrets.open(webhook.signing_secret),
    id,
    timestamp,
    body,
  );
  return { url: webhook.target_url, headers, body };
}
