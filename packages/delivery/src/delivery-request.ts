import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { deliveryBody } from '@platform/db';
import { type SecretBox } from '@platform/crypto';
import { WEBHOOK_USER_AGENT, WebhookAuthType } from '@platform/shared';
import type { DeliveryRequest } from './deliver';

/** Issues the service-signed bearer token a registration of auth type 2 or 3 carries. */
export type BearerTokenSource = (registration: { id: number; partyId: number }) => Promise<string>;

/** Signing keys by secret, at most SIGNING_KEYS_KEPT (cleared whole past that: a cache, not a registry). */
const signingKeys = new Map<string, KeyObject>();
const SIGNING_KEYS_KEPT = 10_000;

/**
 * The HMAC key of a `whsec_` secret, made once per secret: Node's `createHmac` given a Buffer
 * checks it against every key type on each call, which made an HMAC of a 1 KB body cost 14 µs
 * instead of 3.3 (Node 24; docs/performance.md › Where the CPU per delivery goes).
 */
function signingKey(secret: string): KeyObject {
  let key = signingKeys.get(secret);
  if (!key) {
    if (signingKeys.size >= SIGNING_KEYS_KEPT) signingKeys.clear();
    key = createSecretKey(Buffer.from(secret.replace(/^whsec_/, ''), 'base64'));
    signingKeys.set(secret, key);
  }
  return key;
}

/** The Standard Webhooks signature of one message: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
export function signStandardWebhook(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * The `webhook-signature` header of one message: its signature with each secret, space separated
 * (Standard Webhooks lets a receiver accept any of them). The current secret first, then, while a
 * rotation's overlap lasts, the previous one, so a receiver still holding the old secret verifies
 * the message too (docs/webhooks.md › Rotating the signing secret).
 */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  return secrets.map((secret) => signStandardWebhook(secret, id, timestamp, body)).join(' ');
}

/**
 * What one delivery is made of: a claimed webhook as `webhook_deliveries` answers it (the
 * dispatcher's), or a test event the API composes (`POST /api/webhook-registrations/{id}/test`).
 */
export interface DeliveryMessage {
  /** The Standard Webhooks message id (`webhook-id`): the webhook id, or a test event's own. */
  id: number | string;
  registration_id: number;
  registration_party_id: number;
  target_url: string;
  auth_type: number;
  /** Sealed JSON of the target's credentials (auth types 1 and 4). */
  auth_credentials: string | null;
  /** Sealed. */
  signing_secret: string;
  /** Sealed; the secret a rotation replaced, while its overlap lasts (null otherwise). */
  previous_signing_secret?: string | null;
  entity: unknown;
  initiator_party_id: number;
  initiator_account_id: number | null;
  event_id: number;
  event_type: number;
  event_entity_name: string;
  event_created: Date | string | null;
  event_last_modified: Date | string | null;
  event_deleted: Date | string | null;
}

/**
 * Opens a registration's sealed credentials. The loop logs whatever a failed preparation throws,
 * and JSON.parse's own error quotes the text it could not read (the plaintext credentials, up to
 * about ten characters of them), so the errors here say what is wrong and never carry the text,
 * not even as a `cause`.
 */
function openCredentials(secrets: SecretBox, sealed: string | null): Record<string, unknown> {
  if (!sealed) throw new Error('the registration has no credentials');
  let credentials: unknown;
  try {
    credentials = JSON.parse(secrets.open(sealed));
  } catch (error) {
    // SecretBox's errors say only that the secret does not open; rethrown as they are
    if (!(error instanceof SyntaxError)) throw error;
    throw new Error('the registration’s credentials are not JSON');
  }
  if (typeof credentials !== 'object' || credentials === null) {
    throw new Error('the registration’s credentials are not a JSON object');
  }
  return credentials as Record<string, unknown>;
}

/** `credentials[name]`, which must be a non-empty string; the error names the field, never its value. */
function credential(credentials: Record<string, unknown>, name: string): string {
  const value = credentials[name];
  if (typeof value !== 'string' || value === '')
    throw new Error(`the registration’s credentials lack ${name}`);
  return value;
}

/**
 * The HTTP request of one delivery (docs/webhooks.md#the-delivery-request): the body, the Standard Webhooks
 * headers (`webhook-id` is the webhook id, so a receiver dedupes retries and redeliveries;
 * `webhook-signature` carries the previous secret's signature too during a rotation's overlap),
 * and the registration's target authorization (docs/dispatcher.md#what-the-target-receives).
 */
export async function buildDeliveryRequest(
  webhook: DeliveryMessage,
  deps: { secrets: SecretBox; bearerToken: BearerTokenSource; now: () => Date },
): Promise<DeliveryRequest> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
  };
  // every credential value the request carries, so the answer's excerpt never stores one
  const credentials: string[] = [];
  let bearer: string | undefined;
  if (
    webhook.auth_type === WebhookAuthType.PlatformBearerInHeader ||
    webhook.auth_type === WebhookAuthType.PlatformBearerInBody
  ) {
    bearer = await deps.bearerToken({ id: webhook.registration_id, partyId: webhook.registration_party_id });
    credentials.push(bearer);
  }
  switch (webhook.auth_type) {
    case WebhookAuthType.BasicAuth: {
      const opened = openCredentials(deps.secrets, webhook.auth_credentials);
      const password = credential(opened, 'password');
      const pair = `${credential(opened, 'username')}:${password}`;
      const encoded = Buffer.from(pair).toString('base64');
      headers.authorization = `Basic ${encoded}`;
      credentials.push(password, pair, encoded);
      break;
    }
    case WebhookAuthType.PlatformBearerInHeader:
      headers.authorization = `Bearer ${bearer}`;
      break;
    case WebhookAuthType.TargetApiToken:
      headers['x-api-key'] = credential(openCredentials(deps.secrets, webhook.auth_credentials), 'apiKey');
      credentials.push(headers['x-api-key']);
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
  const secrets = [webhook.signing_secret, webhook.previous_signing_secret]
    .filter((sealed): sealed is string => typeof sealed === 'string' && sealed !== '')
    .map((sealed) => deps.secrets.open(sealed));
  headers['webhook-signature'] = signatureHeader(secrets, id, timestamp, body);
  return { url: webhook.target_url, headers, body, credentials };
}
