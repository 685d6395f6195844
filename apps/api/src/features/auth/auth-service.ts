import { randomUUID } from 'node:crypto';
import type { Knex } from '@platform/db';
import type {
  LoginRequest,
  LoginResponse,
  MfaChallenge,
  MfaLoginRequest,
  TokenResponse,
} from '@platform/shared';
import type { AppDeps } from '../../deps';
import { verifyPassword } from '../../auth/passwords';
import { AppError, UnauthenticatedError } from '../../http/errors';
import { consumeRateLimit, refundRateLimit, type RateLimitPolicy } from '../../http/rate-limit';
import { lockMfaAccount, MFA_PER_ACCOUNT, spendSecondFactor, wrongMfaCode } from '../mfa/mfa-service';
import { accessClaimsFor, findLoginAccount } from './account-claims';

/**
 * Failed login attempts per email and per client address; shared by every replica through
 * Postgres. A successful login does not count.
 */
export const LOGIN_PER_ACCOUNT: RateLimitPolicy = {
  name: 'LoginPerAccount',
  limit: 10,
  windowMs: 15 * 60_000,
};
export const LOGIN_PER_ADDRESS: RateLimitPolicy = {
  name: 'LoginPerAddress',
  limit: 100,
  windowMs: 15 * 60_000,
};

/** Issues an access token and a new refresh token of `familyId`, recording the refresh token. */
async function issueTokens(
  deps: AppDeps,
  trx: Knex,
  account: NonNullable<Awaited<ReturnType<typeof findLoginAccount>>>,
  familyId: string,
): Promise<TokenResponse> {
  const claims = await accessClaimsFor(trx, account);
  const accessToken = await deps.tokens.signAccessToken(claims);
  const refresh = await deps.tokens.signRefreshToken(account.id, familyId);
  await trx('refresh_tokens').insert({
    jti: refresh.jti,
    family_id: familyId,
    account_id: account.id,
    issued_at: deps.now(),
    expires_at: refresh.expiresAt,
  });
  return { accessToken, refreshToken: refresh.token };
}

/**
 * The first step of a login of an account with multi-factor authentication: a single-use
 * mfaToken, recorded so POST /api/auth/login/mfa can take it once.
 */
async function startMfaLogin(deps: AppDeps, accountId: number): Promise<MfaChallenge> {
  const mfa = await deps.tokens.signMfaToken(accountId);
  await deps.knex('mfa_login_tokens').insert({
    jti: mfa.jti,
    account_id: accountId,
    issued_at: deps.now(),
    expires_at: mfa.expiresAt,
  });
  return { mfaRequired: true, mfaToken: mfa.token };
}

/**
 * Email + password login (docs/decisions.md#authentication); a wrong email and a wrong password look the same. An
 * account with multi-factor authentication gets an mfaToken instead of tokens, unless it asks to
 * skip the second factor and its policy allows that.
 */
export async function login(
  deps: AppDeps,
  request: LoginRequest,
  clientAddress: string,
): Promise<LoginResponse> {
  const now = deps.now();
  const accountKey = request.email.toLowerCase();
  // every attempt takes a hit up front, so concurrent guesses cannot overrun the limit …
  await consumeRateLimit(deps.knex, LOGIN_PER_ADDRESS, clientAddress, now);
  await consumeRateLimit(deps.knex, LOGIN_PER_ACCOUNT, accountKey, now);
  const account = await findLoginAccount(deps.knex, { email: request.email });
  const valid = await verifyPassword(account?.password_hash, request.password);
  if (!account || !valid) throw new AppError('BadRequest', 'The email or the password is wrong');
  const skipsSecondFactor = request.skipMultiFactorAuthentication === true && account.allow_skip_mfa;
  const response =
    account.mfa_enabled && !skipsSecondFactor
      ? await startMfaLogin(deps, account.id)
      : await deps.knex.transaction((trx) => issueTokens(deps, trx, account, randomUUID()));
  // … and a successful one gives it back: only failures count (a right password is a success,
  // wrong second factors count against their own limit)
  await refundRateLimit(deps.knex, LOGIN_PER_ADDRESS, clientAddress, now);
  await refundRateLimit(deps.knex, LOGIN_PER_ACCOUNT, accountKey, now);
  return response;
}

/**
 * The second step of a login with multi-factor authentication: the mfaToken of the first step
 * (once, within 5 minutes) and a TOTP code or an unused recovery code, which is then spent.
 * A wrong code is a 400 and counts against MFA_PER_ACCOUNT; a bad, expired or used mfaToken is
 * a 401, as for a refresh token.
 */
export async function loginWithMfa(deps: AppDeps, request: MfaLoginRequest): Promise<TokenResponse> {
  const verified = await deps.tokens.verifyMfaToken(request.mfaToken);
  if (!verified) throw new UnauthenticatedError('invalid mfa token');
  const now = deps.now();
  const key = String(verified.accountId);
  // counted up front, so concurrent guesses cannot overrun the limit; given back unless a guess failed
  await consumeRateLimit(deps.knex, MFA_PER_ACCOUNT, key, now);
  const outcome = await deps.knex.transaction(async (trx) => {
    // the token's row lock makes concurrent uses of one mfaToken take turns: one wins
    const row = await trx('mfa_login_tokens').where({ jti: verified.jti }).forUpdate().first();
    if (!row || row.account_id !== verified.accountId || row.used_at || row.expires_at <= now) {
      return 'invalid';
    }
    const mfaAccount = await lockMfaAccount(trx, verified.accountId);
    // MFA disabled meanwhile: the first step no longer stands for what it did
    if (!mfaAccount?.mfa_enabled) return 'invalid';
    // its party may be gone too
    const account = await findLoginAccount(trx, { id: verified.accountId });
    if (!account) return 'invalid';
    if (!(await spendSecondFactor(trx, deps.secrets, mfaAccount, request.code, now))) return 'wrong-code';
    await trx('mfa_login_tokens').where({ jti: row.jti }).update({ used_at: now });
    return issueTokens(deps, trx, account, randomUUID());
  });
  if (outcome === 'wrong-code') throw wrongMfaCode();
  await refundRateLimit(deps.knex, MFA_PER_ACCOUNT, key, now);
  if (outcome === 'invalid') throw new UnauthenticatedError('mfa token invalid, used or expired');
  return outcome;
}

/**
 * Exchanges a refresh token for a new pair. Each refresh token works once: presenting a used or
 * revoked one revokes its whole family (every token descended from the same login), since it
 * means the token was stolen or replayed.
 */
export async function refresh(deps: AppDeps, refreshToken: string): Promise<TokenResponse> {
  const verified = await deps.tokens.verifyRefreshToken(refreshToken);
  if (!verified) throw new UnauthenticatedError('invalid refresh token');
  const outcome = await deps.knex.transaction(async (trx) => {
    const row = await trx('refresh_tokens').where({ jti: verified.jti }).forUpdate().first();
    if (!row || row.account_id !== verified.accountId || row.family_id !== verified.familyId)
      return 'invalid';
    if (row.used_at || row.revoked_at) {
      await trx('refresh_tokens')
        .where({ family_id: row.family_id })
        .whereNull('revoked_at')
        .update({ revoked_at: deps.now() });
      return 'reused';
    }
    await trx('refresh_tokens').where({ jti: row.jti }).update({ used_at: deps.now() });
    const account = await findLoginAccount(trx, { id: verified.accountId });
    if (!account) return 'invalid';
    return issueTokens(deps, trx, account, row.family_id);
  });
  if (typeof outcome === 'string') {
    if (outcome === 'reused')
      deps.logger.warn({ familyId: verified.familyId }, 'refresh token reused; family revoked');
    throw new UnauthenticatedError(`refresh token ${outcome}`);
  }
  return outcome;
}
