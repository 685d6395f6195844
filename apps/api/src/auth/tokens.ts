import { randomUUID } from 'node:crypto';
import { decodePermissions, ALL_PARTY_TYPES, TokenScope, type PartyType } from '@platform/shared';
import { importJWK, jwtVerify, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type { Principal } from './principal';
import type { SigningKey } from './keys';

/** What an access token says about its account (spec 2.3). */
export interface AccessClaims {
  accountId: number;
  partyId: number;
  partyName: string;
  partyType: PartyType;
  email: string;
  scope: TokenScope;
  /** The `permissions` claim: base64url bitset. */
  permissions: string;
  telemetry: { UnitCount: number; ProcessCount: number };
}

export interface TokenServiceOptions {
  issuer: string;
  audience: string;
  accessTtlMs: number;
  refreshTtlMs: number;
  now: () => Date;
}

const SCOPES = new Set<string>(Object.values(TokenScope));
const ALGORITHMS = ['RS256'];

/** Signs and verifies the API's JWTs: access tokens, refresh tokens and their JWKS. */
export class TokenService {
  private readonly verifyKey: Promise<CryptoKey | Uint8Array>;
  /** Refresh tokens carry their own audience, so one can never pass as an access token. */
  readonly refreshAudience: string;

  constructor(
    private readonly key: SigningKey,
    private readonly options: TokenServiceOptions,
  ) {
    this.verifyKey = importJWK(key.publicJwk, 'RS256');
    this.refreshAudience = `${options.audience}/refresh`;
  }

  /** The JSON Web Key Set published at `/.well-known/jwks.json`. */
  jwks(): { keys: JWK[] } {
    return { keys: [this.key.publicJwk] };
  }

  private nowSeconds(): number {
    return Math.floor(this.options.now().getTime() / 1000);
  }

  /** An RS256 access token with exactly the claims of spec 2.3. */
  async signAccessToken(claims: AccessClaims): Promise<string> {
    const iat = this.nowSeconds();
    return new SignJWT({
      partyId: String(claims.partyId),
      partyName: claims.partyName,
      accountRole: String(claims.partyType),
      email: claims.email,
      scope: claims.scope,
      permissions: claims.permissions,
      telemetry: JSON.stringify(claims.telemetry),
    })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: this.key.kid })
      .setSubject(String(claims.accountId))
      .setIssuer(this.options.issuer)
      .setAudience(this.options.audience)
      .setIssuedAt(iat)
      .setExpirationTime(iat + Math.floor(this.options.accessTtlMs / 1000))
      .sign(this.key.privateKey);
  }

  /** A one-time refresh token for `accountId` in token family `familyId`. */
  async signRefreshToken(
    accountId: number,
    familyId: string,
  ): Promise<{ token: string; jti: string; expiresAt: Date }> {
    const iat = this.nowSeconds();
    const jti = randomUUID();
    const exp = iat + Math.floor(this.options.refreshTtlMs / 1000);
    const token = await new SignJWT({ fam: familyId })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: this.key.kid })
      .setSubject(String(accountId))
      .setJti(jti)
      .setIssuer(this.options.issuer)
      .setAudience(this.refreshAudience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key.privateKey);
    return { token, jti, expiresAt: new Date(exp * 1000) };
  }

  private async verify(token: string, audience: string): Promise<JWTPayload> {
    const { payload } = await jwtVerify(token, await this.verifyKey, {
      algorithms: ALGORITHMS,
      issuer: this.options.issuer,
      audience,
      currentDate: this.options.now(),
      requiredClaims: ['sub', 'iat', 'exp'],
    });
    return payload;
  }

  /**
   * The principal of a valid access token, or undefined for anything else: expired, not yet
   * valid, malformed, another algorithm (`none`, HS256), another key, issuer or audience.
   */
  async verifyAccessToken(token: string): Promise<Principal | undefined> {
    let payload: JWTPayload;
    try {
      payload = await this.verify(token, this.options.audience);
    } catch {
      return undefined;
    }
    const accountId = Number(payload.sub);
    const partyId = Number(payload.partyId);
    const partyType = Number(payload.accountRole) as PartyType;
    const { scope, email, partyName, permissions } = payload;
    if (
      !Number.isInteger(accountId) ||
      !Number.isInteger(partyId) ||
      !ALL_PARTY_TYPES.includes(partyType) ||
      typeof scope !== 'string' ||
      !SCOPES.has(scope) ||
      typeof email !== 'string' ||
      typeof partyName !== 'string' ||
      typeof permissions !== 'string'
    ) {
      return undefined;
    }
    return {
      accountId,
      partyId,
      partyName,
      partyType,
      email,
      scope: scope as TokenScope,
      permissions: decodePermissions(permissions),
    };
  }

  /** The account, family and jti of a valid refresh token, or undefined. */
  async verifyRefreshToken(
    token: string,
  ): Promise<{ accountId: number; familyId: string; jti: string } | undefined> {
    try {
      const payload = await this.verify(token, this.refreshAudience);
      const accountId = Number(payload.sub);
      if (
        !Number.isInteger(accountId) ||
        typeof payload.jti !== 'string' ||
        typeof payload.fam !== 'string'
      ) {
        return undefined;
      }
      return { accountId, familyId: payload.fam, jti: payload.jti };
    } catch {
      return undefined;
    }
  }
}
