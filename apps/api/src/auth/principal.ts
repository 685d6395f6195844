import type { PartyType, TokenScope } from '@platform/shared';

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
}
