import {
  encodePermissions,
  PERMISSIONS,
  PermissionAction,
  TokenScope,
  type PartyType,
} from '@platform/shared';
import { SignJWT } from 'jose';
import type { SigningKey } from './signing-key';

// The service-signed bearer token of webhook authorization types 2 and 3
// (docs/dispatcher.md#the-webhook-token). The
// dispatcher signs it, the API accepts it, targets verify it with the API's JWKS: this module is
// the one place that says what it holds.

/** How long a webhook bearer token is valid (docs/dispatcher.md#the-webhook-token). */
export const WEBHOOK_TOKEN_TTL_MS = 30 * 60_000;

const SUBJECT_PREFIX = 'webhook-registration:';

/**
 * Resources whose data is no party's domain data: accounts and the webhook configuration itself.
 * Their routes refuse the webhook scope anyway; leaving their Read out keeps the claim honest.
 */
const NOT_READABLE = new Set(['Account', 'AccountContactDetails', 'WebhookRegistration', 'Webhook']);

/** The permission ids a webhook token carries: Read of every domain resource. */
export const WEBHOOK_TOKEN_PERMISSION_IDS: ReadonlySet<number> = new Set(
  PERMISSIONS.filter(
    (permission) => permission.action === PermissionAction.Read && !NOT_READABLE.has(permission.resource),
  ).map((permission) => permission.id),
);

/**
 * The `sub` of a webhook token: `webhook-registration:<id>`. It names the registration, not an
 * account, and never parses as an account id, so no code reading `sub` as one can be fooled.
 */
export function webhookTokenSubject(registrationId: number): string {
  return `${SUBJECT_PREFIX}${registrationId}`;
}

/** The registration id of a webhook token's `sub`, or undefined when it is not one. */
export function webhookRegistrationIdOf(subject: unknown): number | undefined {
  if (typeof subject !== 'string' || !subject.startsWith(SUBJECT_PREFIX)) return undefined;
  const digits = subject.slice(SUBJECT_PREFIX.length);
  if (!/^[1-9][0-9]{0,9}$/.test(digits)) return undefined;
  const id = Number(digits);
  return id <= 2_147_483_647 ? id : undefined;
}

/** Whom a webhook token speaks for: the registration and its party. */
export interface WebhookTokenSubject {
  registrationId: number;
  partyId: number;
  partyName: string;
  partyType: PartyType;
}

/**
 * Signs a webhook bearer token: RS256 with the API's key (`kid` in the header, so the JWKS
 * verifies it), the API's issuer and audience, scope `webhook`, valid `WEBHOOK_TOKEN_TTL_MS`.
 * The claims follow an access token's (docs/api.md#access-tokens) where they make sense (`partyId`, `partyName`, `accountRole`,
 * `scope`, `permissions`); `email` and `telemetry` describe an account and are left out.
 */
export async function signWebhookToken(
  key: SigningKey,
  subject: WebhookTokenSubject,
  options: { issuer: string; audience: string; now: Date },
): Promise<{ token: string; expiresAt: Date }> {
  const iat = Math.floor(options.now.getTime() / 1000);
  const exp = iat + WEBHOOK_TOKEN_TTL_MS / 1000;
  const token = await new SignJWT({
    partyId: String(subject.partyId),
    partyName: subject.partyName,
    accountRole: String(subject.partyType),
    scope: TokenScope.Webhook,
    permissions: encodePermissions(WEBHOOK_TOKEN_PERMISSION_IDS),
  })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
    .setSubject(webhookTokenSubject(subject.registrationId))
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key.privateKey);
  return { token, expiresAt: new Date(exp * 1000) };
}
