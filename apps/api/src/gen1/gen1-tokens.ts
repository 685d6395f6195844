import { ALL_PARTY_TYPES, decodePermissions, TokenScope, type PartyType } from '@platform/shared';
import { SignJWT, type JWTPayload } from 'jose';
import type { Principal } from '../auth/principal';
import { idClaim, TokenService, type AccessClaims } from '../auth/tokens';

/** The `gen` claim every Gen1 access token carries. */
export const GEN1_GENERATION = 1;

/** Scopes a Gen1 token may carry: an account's, never the webhook scope (a Gen2 notion). */
const GEN1_SCOPES = new Set<string>([TokenScope.Platform, TokenScope.ChangePassword]);
const PARTY_TYPES = new Set<number>(ALL_PARTY_TYPES);

/** A JSON number that is a positive int32 id, else undefined. */
function numericId(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 2_147_483_647
    ? value
    : undefined;
}

/**
 * The Gen1 API's tokens: the keys, issuer, lifetimes and refresh-token families of the Gen2
 * service, under the Gen1 audience (`JWT_GEN1_AUDIENCE`, its refresh tokens `<it>/refresh`, its
 * MFA tokens `<it>/mfa`) and with a claim set of Gen1's own (docs/gen1-to-gen2.md):
 *
 * `sub` (account id, text), `gen` (1), `company_id`, `company_type` (numbers), `company_name`,
 * `email`, `scope`, `permissions` (the Gen2 bitset), `iat`, `exp`, `iss`, `aud`.
 *
 * Neither generation accepts the other's tokens: each verifies only its own audience, and the
 * claim sets differ besides (numeric ids here, strings of digits in Gen2), so even two equal
 * audiences (which the configuration refuses) would not let a token cross.
 */
export class Gen1TokenService extends TokenService {
  /** A Gen1 access token for the account `claims` describes (the Gen2 claims, renamed; no telemetry). */
  override async signAccessToken(claims: AccessClaims): Promise<string> {
    const iat = this.nowSeconds();
    return new SignJWT({
      gen: GEN1_GENERATION,
      company_id: claims.partyId,
      company_name: claims.partyName,
      company_type: claims.partyType,
      email: claims.email,
      scope: claims.scope,
      permissions: claims.permissions,
    })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: this.key.kid })
      .setSubject(String(claims.accountId))
      .setIssuer(this.options.issuer)
      .setAudience(this.options.audience)
      .setIssuedAt(iat)
      .setExpirationTime(iat + Math.floor(this.options.accessTtlMs / 1000))
      .sign(this.key.privateKey);
  }

  /**
   * The principal of a valid Gen1 access token, or undefined for anything else: a Gen2 access,
   * refresh or webhook token (another audience), an expired, malformed or foreign-signed one.
   */
  override async verifyAccessToken(token: string): Promise<Principal | undefined> {
    let payload: JWTPayload;
    try {
      payload = await this.verify(token, this.options.audience, this.options.accessTtlMs);
    } catch {
      return undefined;
    }
    const accountId = idClaim(payload.sub);
    const partyId = numericId(payload.company_id);
    const { gen, company_type: partyType, company_name: partyName, email, scope, permissions } = payload;
    if (
      gen !== GEN1_GENERATION ||
      accountId === undefined ||
      partyId === undefined ||
      typeof partyType !== 'number' ||
      !PARTY_TYPES.has(partyType) ||
      typeof partyName !== 'string' ||
      typeof email !== 'string' ||
      typeof scope !== 'string' ||
      !GEN1_SCOPES.has(scope) ||
      typeof permissions !== 'string'
    ) {
      return undefined;
    }
    return {
      accountId,
      partyId,
      partyName,
      partyType: partyType as PartyType,
      email,
      scope: scope as TokenScope,
      permissions: decodePermissions(permissions),
    };
  }
}

/** The Gen1 token service of an API: its Gen2 service's key and clock, the Gen1 audience. */
export function gen1TokenService(tokens: TokenService, audience: string): Gen1TokenService {
  return tokens.derive(Gen1TokenService, { audience });
}
