/** Party types, also called account roles (docs/api.md#party-types). */
export const PartyType = {
  Admin: 1,
  PropertyManagementCompany: 2,
  PoolManager: 3,
  Contractor: 5,
  User: 7,
  InsuranceBroker: 13,
  Insurer: 14,
} as const;
export type PartyType = (typeof PartyType)[keyof typeof PartyType];
export const ALL_PARTY_TYPES: readonly PartyType[] = Object.values(PartyType);

/** Webhook states (docs/webhooks.md#the-state-machine); which changes between them are allowed: `webhook-states.ts`. */
export const WebhookState = {
  Created: 1,
  Retrying: 2,
  Successful: 3,
  Failed: 4,
  Aborted: 5,
  Pending: 6,
  Resolved: 7,
} as const;
export type WebhookState = (typeof WebhookState)[keyof typeof WebhookState];

/** Webhook event types (docs/webhooks.md#events). Only 1–3 can be subscribed to. */
export const WebhookEventType = {
  Created: 1,
  Updated: 2,
  Deleted: 3,
  ReplaceRelation: 4,
  AddToRelation: 5,
  RemoveFromRelation: 6,
} as const;
export type WebhookEventType = (typeof WebhookEventType)[keyof typeof WebhookEventType];

/** Webhook target authorization types (docs/dispatcher.md#what-the-target-receives). */
export const WebhookAuthType = {
  NoAuth: 0,
  BasicAuth: 1,
  PlatformBearerInHeader: 2,
  PlatformBearerInBody: 3,
  TargetApiToken: 4,
} as const;
export type WebhookAuthType = (typeof WebhookAuthType)[keyof typeof WebhookAuthType];

/** Token scopes (docs/api.md#scopes). */
export const TokenScope = {
  Platform: 'platform',
  ChangePassword: 'change-password',
  Webhook: 'webhook',
  /** An endpoint-portal session's token (docs/portal.md): only the routes its actions allow. */
  Portal: 'portal',
} as const;
export type TokenScope = (typeof TokenScope)[keyof typeof TokenScope];
