import type { PartyType, TokenScope } from '@platform/shared';

/** Who is calling: the verified claims of an access token. */
export interface Principal {
  accountId: number;
  partyId: number;
  partyName: string;
  partyType: PartyType;
  email: string;
  scope: TokenScope;
  /** Permission ids decoded from the `permissions` claim. */
  permissions: ReadonlySet<number>;
}
