import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from '@platform/db';
import type { SecretBox } from '@platform/crypto';
import {
  TOTP_CODE,
  type MfaDisableRequest,
  type MfaEnrolment,
  type MfaRecoveryCodes,
} from '@platform/shared';
import type { Principal } from '../../auth/principal';
import { verifyPassword } from '../../auth/passwords';
import type { AppDeps } from '../../deps';
import { AppError, fieldError } from '../../http/errors';
import { consumeRateLimit, refundRateLimit, type RateLimitPolicy } from '../../http/rate-limit';
import { runWrite } from '../../write-path';
import { base32Encode, generateTotpSecret, otpauthUri, verifyTotp } from './totp';

/**
 * Failed second-factor attempts per account, at the login step and when disabling alike (so two
 * endpoints do not double an attacker's guesses). Six digits with a ±1 step window leave 3 in a
 * million per guess; 5 guesses per 15 minutes keep that far from reach.
 */
export const MFA_PER_ACCOUNT: RateLimitPolicy = {
  name: 'MfaPerAccount',
  limit: 5,
  windowMs: 15 * 60_000,
};

/** The issuer an authenticator app shows next to the account. */
export const MFA_ISSUER = 'Property Platform';
export const RECOVERY_CODE_COUNT = 10;
/** 10 bytes = 80 random bits = 16 base32 characters. */
const RECOVERY_CODE_BYTES = 10;

/** The MFA state of an account, read under a row lock. */
export interface MfaAccountRow {
  id: number;
  email: string;
  password_hash: string | null;
  /** The TOTP secret, sealed by the secret box; pending while `mfa_enabled` is false. */
  mfa_secret: string | null;
  mfa_enabled: boolean;
  mfa_last_used_step: number | null;
}

/**
 * The live account's MFA state, its row locked until the transaction ends: concurrent requests of
 * one account take turns, so one code cannot be accepted twice.
 */
export function lockMfaAccount(trx: Knex.Transaction, accountId: number): Promise<MfaAccountRow | undefined> {
  return trx('accounts')
    .where({ id: accountId })
    .whereNull('deleted')
    .forUpdate()
    .first<MfaAccountRow | undefined>(
      'id',
      'email',
      'password_hash',
      'mfa_secret',
      'mfa_enabled',
      'mfa_last_used_step',
    );
}

/** The stored form of a (normalised) recovery code. 80 random bits need no slow hash. */
function hashRecoveryCode(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

/** Ten new recovery codes, printed `ABCD-EFGH-IJKL-MNOP`. */
function generateRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () =>
    base32Encode(randomBytes(RECOVERY_CODE_BYTES)).match(/.{4}/g)!.join('-'),
  );
}

/** The 400 of a wrong (or replayed, or spent) second-factor code. */
export const wrongMfaCode = () => fieldError('code', 'is wrong, expired or already used');

/**
 * Checks a second factor of a locked account, TOTP or recovery code (normalised), and spends it:
 * the TOTP's step is recorded (a code works once), a recovery code is marked used. False if wrong;
 * nothing is written then.
 */
export async function spendSecondFactor(
  trx: Knex.Transaction,
  secrets: SecretBox,
  account: MfaAccountRow,
  code: string,
  now: Date,
): Promise<boolean> {
  if (TOTP_CODE.test(code)) {
    if (!account.mfa_secret) return false;
    const step = verifyTotp(secrets.open(account.mfa_secret), code, now, account.mfa_last_used_step);
    if (step === undefined) return false;
    await trx('accounts').where({ id: account.id }).update({ mfa_last_used_step: step });
    return true;
  }
  const spent = await trx('mfa_recovery_codes')
    .whereIn(
      'id',
      trx('mfa_recovery_codes')
        .select('id')
        .where({ account_id: account.id, code_hash: hashRecoveryCode(code) })
        .whereNull('used_at')
        .limit(1),
    )
    .update({ used_at: now });
  return spent > 0;
}

async function lockOwnAccount(trx: Knex.Transaction, principal: Principal): Promise<MfaAccountRow> {
  const account = await lockMfaAccount(trx, principal.accountId);
  if (!account) throw new AppError('NotFound', `Account ${principal.accountId} was not found`);
  return account;
}

const alreadyEnabled = () =>
  new AppError(
    'Conflict',
    'Multi-factor authentication is already enabled; disable it first (DELETE /api/accounts/myself/mfa)',
  );

/**
 * Starts (or restarts) enrolment of the caller's account: a new TOTP secret, stored sealed and
 * pending until confirmed. An enabled factor is not replaced this way, since that would let a
 * stolen access token swap the account's second factor without knowing the current one.
 */
export function startEnrolment(deps: AppDeps, principal: Principal): Promise<MfaEnrolment> {
  return runWrite(deps, principal, async ({ trx }) => {
    const account = await lockOwnAccount(trx, principal);
    if (account.mfa_enabled) throw alreadyEnabled();
    const secret = generateTotpSecret();
    await trx('accounts')
      .where({ id: account.id })
      .update({ mfa_secret: deps.secrets.seal(secret), mfa_last_used_step: null });
    return { secret, otpauthUri: otpauthUri({ secret, issuer: MFA_ISSUER, accountName: account.email }) };
  });
}

/**
 * Confirms the pending enrolment with a code of the authenticator app: MFA is enabled and ten
 * recovery codes are answered, this once (only their hashes are kept).
 */
export function confirmEnrolment(
  deps: AppDeps,
  principal: Principal,
  code: string,
): Promise<MfaRecoveryCodes> {
  return runWrite(deps, principal, async ({ trx, now }) => {
    const account = await lockOwnAccount(trx, principal);
    if (account.mfa_enabled) throw alreadyEnabled();
    if (!account.mfa_secret) {
      throw new AppError(
        'Conflict',
        'There is no enrolment to confirm; start one with POST /api/accounts/myself/mfa',
      );
    }
    const step = verifyTotp(deps.secrets.open(account.mfa_secret), code, now, account.mfa_last_used_step);
    if (step === undefined) throw wrongMfaCode();
    await trx('accounts')
      .where({ id: account.id })
      .update({ mfa_enabled: true, mfa_last_used_step: step, last_modified: now });
    const recoveryCodes = generateRecoveryCodes();
    await trx('mfa_recovery_codes').where({ account_id: account.id }).del();
    await trx('mfa_recovery_codes').insert(
      recoveryCodes.map((recoveryCode) => ({
        account_id: account.id,
        code_hash: hashRecoveryCode(recoveryCode.replace(/-/g, '')),
        created: now,
      })),
    );
    return { recoveryCodes };
  });
}

/**
 * Disables MFA of the caller's account, given its password and a second factor, and deletes the
 * secret, the recovery codes and pending MFA logins. Wrong guesses count against MFA_PER_ACCOUNT,
 * since a stolen access token must not become a way to try passwords or codes.
 */
export async function disableMfa(
  deps: AppDeps,
  principal: Principal,
  request: MfaDisableRequest,
): Promise<void> {
  const now = deps.now();
  const key = String(principal.accountId);
  // counted up front, so concurrent guesses cannot overrun the limit; given back unless a guess failed
  await consumeRateLimit(deps.knex, MFA_PER_ACCOUNT, key, now);
  const outcome = await runWrite(deps, principal, async ({ trx, now: writeTime }) => {
    const account = await lockMfaAccount(trx, principal.accountId);
    if (!account) return 'not-found';
    if (!account.mfa_enabled) return 'not-enabled';
    if (!(await verifyPassword(account.password_hash, request.password))) return 'wrong-password';
    if (!(await spendSecondFactor(trx, deps.secrets, account, request.code, writeTime))) return 'wrong-code';
    await trx('accounts')
      .where({ id: account.id })
      .update({ mfa_secret: null, mfa_enabled: false, mfa_last_used_step: null, last_modified: writeTime });
    await trx('mfa_recovery_codes').where({ account_id: account.id }).del();
    await trx('mfa_login_tokens').where({ account_id: account.id }).del();
    return 'disabled';
  });
  if (outcome === 'wrong-password') throw fieldError('password', 'is wrong');
  if (outcome === 'wrong-code') throw wrongMfaCode();
  await refundRateLimit(deps.knex, MFA_PER_ACCOUNT, key, now);
  if (outcome === 'not-found') throw new AppError('NotFound', `Account ${principal.accountId} was not found`);
  if (outcome === 'not-enabled') {
    throw new AppError('Conflict', 'Multi-factor authentication is not enabled for this account');
  }
}
