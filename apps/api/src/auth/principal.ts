import type { PartyType, PortalAction, TokenScope } from '@platform/shared';

/** Who is calling: the verified claims of an access token, or of a webhook bearer token. */
export interface Principal {
  /**
   * The calling account; 0 for a webhook token, which acts for a registration's party and no
   * account (ids start at 1, so 0 matches no row; the routes a webhook token may call never
   * read it).
   */
  accountId: number;
  partyId: number;
  partyName: string;
  partyType: PartyType;
  /** The account's email; empty for a webhook token. */
  email: string;
  scope: TokenScope;
  /** Permission ids decoded from the `permissions` claim. */
  permissions: ReadonlySet<number>;
  /** The registration a webhook token (scope `webhook`) was issued for; absent on account tokens. */
  webhookRegistrationId?: number;
  /**
   * The endpoint-portal session a token of scope `portal` acts for (docs/portal.md), read from its
   * row on every request; absent on every other token.
   */
  portal?: PortalScope;
}

/** What a portal session may reach: its party (the principal's), these registrations, these actions. */
export interface PortalScope {
  sessionId: string;
  actions: ReadonlySet<PortalAction>;
  /** Only these registrations of the party; null for all of them. */
  registrationIds: readonly number[] | null;
}
