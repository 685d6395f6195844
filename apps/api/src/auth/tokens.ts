import { randomUUID } from 'node:crypto';
import {
  WEBHOOK_TOKEN_PERMISSION_IDS,
  WEBHOOK_TOKEN_TTL_MS,
  webhookRegistrationIdOf,
  type SigningKey,
} from '@platform/crypto';
import {
  decodePermissions,
  ALL_PARTY_TYPES,
  MAX_PORTAL_SESSION_MS,
  TokenScope,
  type PartyType,
} from '@platform/shared';
import { decodeJwt, importJWK, jwtVerify, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type { Principal } from './principal';

/** What an access token says about its account (docs/api.md#access-tokens). */
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

/** Scopes an access token may carry: a portal token is a kind of its own, with its own audience. */
const SCOPES = new Set<string>([TokenScope.Platform, TokenScope.ChangePassword]);
const PARTY_TYPES = new Set<string>(ALL_PARTY_TYPES.map(String));
const ALGORITHMS = ['RS256'];
/** How far in the future an `iat` may be: the clock skew tolerated between API replicas. */
const ISSUED_AT_LEEWAY_S = 5;
/** Verified access tokens remembered at most (a few MB); past it the memory starts afresh. */
const VERIFIED_TOKENS_REMEMBERED = 10_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Lifetime of the token between a password login and its second factor. */
export const MFA_TOKEN_TTL_MS = 5 * 60_000;

/** A database id (positive int32) written as a canonical decimal string, else undefined. */
export function idClaim(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^[1-9][0-9]{0,9}$/.test(value)) return undefined;
  const id = Number(value);
  return id <= 2_147_483_647 ? id : undefined;
}

/**
 * The principal of a verified token of scope `webhook` (signed by the dispatcher, docs/dispatcher.md#the-webhook-token), or
 * undefined when its claims are not those of `signWebhookToken`. It reads for the registration's
 * party and holds at most the read permissions such a token is issued with.
 */
function webhookPrincipal(payload: JWTPayload): Principal | undefined {
  const registrationId = webhookRegistrationIdOf(payload.sub);
  const partyId = idClaim(payload.partyId);
  const { accountRole, partyName, permissions } = payload;
  if (
    registrationId === undefined ||
    partyId === undefined ||
    typeof accountRole !== 'string' ||
    !PARTY_TYPES.has(accountRole) ||
    typeof partyName !== 'string' ||
    typeof permissions !== 'string' ||
    payload.exp! - payload.iat! > WEBHOOK_TOKEN_TTL_MS / 1000
  ) {
    return undefined;
  }
  const granted = [...decodePermissions(permissions)].filter((id) => WEBHOOK_TOKEN_PERMISSION_IDS.has(id));
  return {
    accountId: 0,
    partyId,
    partyName,
    partyType: Number(accountRole) as PartyType,
    email: '',
    scope: TokenScope.Webhook,
    permissions: new Set(granted),
    webhookRegistrationId: registrationId,
  };
}

/** Signs and verifies the API's JWTs: access tokens, refresh tokens and their JWKS. */
export class TokenService {
  private readonly verified = new Map<string, { principal: Principal; exp: number }>();
  private readonly verifyKey: Promise<CryptoKey | Uint8Array>;
  /** Refresh tokens carry their own audience, so one can never pass as an access token. */
  readonly refreshAudience: string;
  /** MFA tokens too: one proves only a right password, never access. */
  readonly mfaAudience: string;
  /** And portal tokens: one is never an access token, and Gen1 refuses it as any other audience. */
  readonly portalAudience: string;

  constructor(
    protected readonly key: SigningKey,
    protected readonly options: TokenServiceOptions,
  ) {
    this.verifyKey = importJWK(key.publicJwk, 'RS256');
    this.refreshAudience = `${options.audience}/refresh`;
    this.mfaAudience = `${options.audience}/mfa`;
    this.portalAudience = `${options.audience}/portal`;
  }

  /**
   * A token service of another kind signing with this one's key and clock, with `overrides`
   * (the Gen1 API's: the same keys for another audience and claim set).
   */
  derive<T extends TokenService>(
    Kind: new (key: SigningKey, options: TokenServiceOptions) => T,
    overrides: Partial<TokenServiceOptions>,
  ): T {
    return new Kind(this.key, { ...this.options, ...overrides });
  }

  /**
   * The key, issuer, audience and clock the platform-signed webhook tokens (docs/dispatcher.md#the-webhook-token) are made
   * with: a test event signs them here as the dispatcher does, for the same JWKS to verify.
   */
  webhookTokenSigner(): { key: SigningKey; issuer: string; audience: string; now: () => Date } {
    return {
      key: this.key,
      issuer: this.options.issuer,
      audience: this.options.audience,
      now: this.options.now,
    };
  }

  /** The JSON Web Key Set published at `/.well-known/jwks.json`. */
  jwks(): { keys: JWK[] } {
    return { keys: [this.key.publicJwk] };
  }

  protected nowSeconds(): number {
    return Math.floor(this.options.now().getTime() / 1000);
  }

  /** An RS256 access token with exactly the claims of docs/api.md#access-tokens. */
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

  /**
   * A single-use token (5 minutes) that a password login of an account with multi-factor
   * authentication answers; only POST /api/auth/login/mfa takes it, with the second factor.
   */
  async signMfaToken(accountId: number): Promise<{ token: string; jti: string; expiresAt: Date }> {
    const iat = this.nowSeconds();
    const jti = randomUUID();
    const exp = iat + Math.floor(MFA_TOKEN_TTL_MS / 1000);
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: this.key.kid })
      .setSubject(String(accountId))
      .setJti(jti)
      .setIssuer(this.options.issuer)
      .setAudience(this.mfaAudience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key.privateKey);
    return { token, jti, expiresAt: new Date(exp * 1000) };
  }

  /**
   * The bearer token of endpoint-portal session `sessionId` (docs/portal.md), valid until the
   * session expires (at most `MAX_PORTAL_SESSION_MS`). It carries only the session id and its
   * party: the session's row says what it may do, so revoking the row ends the token.
   */
  async signPortalToken(sessionId: string, partyId: number, expiresAt: Date): Promise<string> {
    return new SignJWT({ scope: TokenScope.Portal, partyId: String(partyId) })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: this.key.kid })
      .setSubject(sessionId)
      .setIssuer(this.options.issuer)
      .setAudience(this.portalAudience)
      .setIssuedAt(this.nowSeconds())
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(this.key.privateKey);
  }

  /** The session id and party of a valid portal token, or undefined for anything else. */
  async verifyPortalToken(token: string): Promise<{ sessionId: string; partyId: number } | undefined> {
    try {
      const payload = await this.verify(token, this.portalAudience, MAX_PORTAL_SESSION_MS);
      const partyId = idClaim(payload.partyId);
      const { sub, scope } = payload;
      if (
        scope !== TokenScope.Portal ||
        partyId === undefined ||
        typeof sub !== 'string' ||
        !UUID.test(sub)
      ) {
        return undefined;
      }
      return { sessionId: sub.toLowerCase(), partyId };
    } catch {
      return undefined;
    }
  }

  /**
   * The payload of a token signed by our key for `audience`, issued in the past (jose alone lets
   * an `iat` in the future pass) and living no longer than its kind's `lifetimeMs`.
   */
  protected async verify(token: string, audience: string, lifetimeMs: number): Promise<JWTPayload> {
    const now = this.options.now();
    const { payload } = await jwtVerify(token, await this.verifyKey, {
      algorithms: ALGORITHMS,
      issuer: this.options.issuer,
      audience,
      currentDate: now,
      requiredClaims: ['sub', 'iat', 'exp'],
    });
    // jose has checked that both are numbers and that exp is in the future
    const iat = payload.iat!;
    const exp = payload.exp!;
    if (iat > Math.floor(now.getTime() / 1000) + ISSUED_AT_LEEWAY_S) throw new Error('issued in the future');
    if (exp - iat > Math.floor(lifetimeMs / 1000)) throw new Error('lives longer than its kind');
    return payload;
  }

  /**
   * The principal of a valid access token or webhook bearer token (scope `webhook`), or undefined
   * for anything else: expired, not yet valid, living longer than its kind, malformed, another
   * algorithm (`none`, HS256), another key, issuer or audience.
   */
  async verifyAccessToken(token: string): Promise<Principal | undefined> {
    // A client sends the same access token with every request for its whole life; its RS256
    // signature is checked once, then the principal is remembered until the token expires.
    // Nothing about a verified token changes but time, and expiry is checked on every hit.
    const now = this.options.now().getTime() / 1000;
    const known = this.verified.get(token);
    if (known) {
      if (known.exp > now) return known.principal;
      this.verified.delete(token);
      return undefined;
    }
    const principal = await this.verifyAccessTokenOnce(token);
    if (principal) {
      if (this.verified.size >= VERIFIED_TOKENS_REMEMBERED) this.verified.clear();
      const exp = Number(decodeJwt(token).exp);
      this.verified.set(token, { principal, exp });
    }
    return principal;
  }

  private async verifyAccessTokenOnce(token: string): Promise<Principal | undefined> {
    let payload: JWTPayload;
    try {
      // both kinds share the audience; each kind's own lifetime is checked below
      const longest = Math.max(this.options.accessTtlMs, WEBHOOK_TOKEN_TTL_MS);
      payload = await this.verify(token, this.options.audience, longest);
    } catch {
      return undefined;
    }
    if (payload.scope === TokenScope.Webhook) return webhookPrincipal(payload);
    if (payload.exp! - payload.iat! > Math.floor(this.options.accessTtlMs / 1000)) return undefined;
    // the claims of docs/api.md#access-tokens, each of its type: ids and the party type are strings of digits
    const accountId = idClaim(payload.sub);
    const partyId = idClaim(payload.partyId);
    const { accountRole, scope, email, partyName, permissions, telemetry } = payload;
    if (
      accountId === undefined ||
      partyId === undefined ||
      typeof accountRole !== 'string' ||
      !PARTY_TYPES.has(accountRole) ||
      typeof scope !== 'string' ||
      !SCOPES.has(scope) ||
      typeof email !== 'string' ||
      typeof partyName !== 'string' ||
      typeof permissions !== 'string' ||
      typeof telemetry !== 'string'
    ) {
      return undefined;
    }
    return {
      accountId,
      partyId,
      partyName,
      partyType: Number(accountRole) as PartyType,
      email,
      scope: scope as TokenScope,
      permissions: decodePermissions(permissions),
    };
  }

  /** The account and jti of a valid MFA token, or undefined. */
  async verifyMfaToken(token: string): Promise<{ accountId: number; jti: string } | undefined> {
    try {
      const payload = await this.verify(token, this.mfaAudience, MFA_TOKEN_TTL_MS);
      const accountId = idClaim(payload.sub);
      const { jti } = payload;
      if (accountId === undefined || typeof jti !== 'string' || !UUID.test(jti)) return undefined;
      return { accountId, jti: jti.toLowerCase() };
    } catch {
      return undefined;
    }
  }

  /** The account, family and jti of a valid refresh token, or undefined. */
  async verifyRefreshToken(
    token: string,
  ): Promise<{ accountId: number; familyId: string; jti: string } | undefined> {
    try {
      const payload = await this.verify(token, this.refreshAudience, this.options.refreshTtlMs);
      const accountId = idClaim(payload.sub);
      const { jti, fam } = payload;
      // jti and fam are uuid columns: anything else would be a database error, not a 401
      if (accountId === undefined || typeof jti !== 'string' || !UUID.test(jti)) return undefined;
      if (typeof fam !== 'string' || !UUID.test(fam)) return undefined;
      return { accountId, familyId: fam.toLowerCase(), jti: jti.toLowerCase() };
    } catch {
      return undefined;
    }
  }
}
