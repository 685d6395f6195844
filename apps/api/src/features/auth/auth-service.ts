import { randomUUID } from 'node:crypto';
import type { Knex } from '@platform/db';
import type { LoginRequest, TokenResponse } from '@platform/shared';
import type { AppDeps } from '../../deps';
import { verifyPassword } from '../../auth/passwords';
import { AppError, UnauthenticatedError } from '../../http/errors';
import { consumeRateLimit, refundRateLimit, type RateLimitPolicy } from '../../http/rate-limit';
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

/** Email + password login (design part 5); a wrong email and a wrong password look the same. */
export async function login(
  deps: AppDeps,
  request: LoginRequest,
  clientAddress: string,
): Promise<TokenResponse> {
  const now = deps.now();
  const accountKey = request.email.toLowerCase();
  // every attempt takes a hit up front, so concurrent guesses cannot overrun the limit …
  await consumeRateLimit(deps.knex, LOGIN_PER_ADDRESS, clientAddress, now);
  await consumeRateLimit(deps.knex, LOGIN_PER_ACCOUNT, accountKey, now);
  const account = await findLoginAccount(deps.knex, { email: request.email });
  const valid = await verifyPassword(account?.password_hash, request.password);
  if (!account || !valid) throw new AppError('BadRequest', 'The email or the password is wrong');
  const tokens = await deps.knex.transaction((trx) => issueTokens(deps, trx, account, randomUUID()));
  // … and a successful one gives it back: only failures count
  await refundRateLimit(deps.knex, LOGIN_PER_ADDRESS, clientAddress, now);
  await refundRateLimit(deps.knex, LOGIN_PER_ACCOUNT, accountKey, now);
  return tokens;
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
