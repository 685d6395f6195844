import { decodePermissions, PartyType, TokenScope } from '@platform/shared';

/** What the console reads from an access token (docs/api.md#access-tokens): who is signed in and until when. */
export interface AccessClaims {
  accountId: number;
  email: string;
  partyId: number;
  partyName: string;
  partyType: number;
  scope: string;
  permissions: Set<number>;
  /** Expiry, epoch milliseconds. */
  expiresAt: number;
}

function base64UrlDecode(text: string): string {
  const padded = text
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(text.length / 4) * 4, '=');
  const binary = atob(padded);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/**
 * The claims of an access token, read without verifying it (the API verifies every request; the
 * console only needs to know whom to greet and when to refresh). Undefined when it is not a JWT
 * with the claims of docs/api.md#access-tokens.
 */
export function decodeAccessToken(token: string): AccessClaims | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(base64UrlDecode(parts[1]!)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const { sub, email, partyId, partyName, accountRole, scope, permissions, exp } = payload;
  if (
    typeof sub !== 'string' ||
    typeof accountRole !== 'string' ||
    typeof scope !== 'string' ||
    typeof exp !== 'number'
  ) {
    return undefined;
  }
  return {
    accountId: Number(sub),
    email: typeof email === 'string' ? email : '',
    partyId: Number(partyId),
    partyName: typeof partyName === 'string' ? partyName : '',
    partyType: Number(accountRole),
    scope,
    permissions: typeof permissions === 'string' ? decodePermissions(permissions) : new Set(),
    expiresAt: exp * 1000,
  };
}

/** Party types that operate webhooks (docs/webhooks.md#who-may-call-them): Admin and Property Management Company. */
export const OPERATOR_PARTY_TYPES: readonly number[] = [PartyType.Admin, PartyType.PropertyManagementCompany];

/** Why these claims cannot use the console, or undefined when they can. */
export function operatorRefusal(claims: AccessClaims): string | undefined {
  if (!OPERATOR_PARTY_TYPES.includes(claims.partyType)) {
    return (
      'This console is for operators: accounts of the Admin party or of a Property Management ' +
      'Company. Your account belongs to another kind of party.'
    );
  }
  if (claims.scope === TokenScope.ChangePassword) {
    return 'Your account must change its password before it can sign in here. Change it through the API first.';
  }
  if (claims.scope !== TokenScope.Platform) return 'This token cannot be used to sign in to the console.';
  return undefined;
}
