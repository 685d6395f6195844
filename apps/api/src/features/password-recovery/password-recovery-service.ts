import { randomInt } from 'node:crypto';
import {
  PartyType,
  TokenScope,
  type AccountActivationMessageResponse,
  type PasswordChangeRecoveryCodeRequest,
  type PasswordChangeRecoveryCodeResponseDto,
  type PasswordRecoveryResponseDto,
  type UnblockRecoveryCodeResponse,
} from '@platform/shared';
import type { Knex } from '@platform/db';
import type { AppDeps } from '../../deps';
import type { Principal } from '../../auth/principal';
import { hashPassword, passwordWeakness, verifyPassword } from '../../auth/passwords';
import { AppError, fieldError } from '../../http/errors';
import { consumeRateLimit, type RateLimitPolicy } from '../../http/rate-limit';
import { scopeToParties } from '../../http/scope';
import { findLoginAccount } from '../auth/account-claims';
import { sendMail } from '../mail/mail-outbox';
import { runWrite } from '../../write-path';

/** Wrong recovery codes in a row that block an account's recovery (docs/decisions.md#password-recovery). */
export const MAX_RECOVERY_FAILURES = 5;

/** The policy name of recover-password's rate limit (docs/decisions.md#password-recovery); its numbers come from config. */
export const RECOVERY_POLICY_NAME = 'DefaultRateLimitAuth';

// No 0/O, 1/I: a code is read from a mail and typed by hand. 32 symbols × 8 = 40 bits.
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;

const RECOVERY_MESSAGE =
  'If an account with this email exists and its recovery is not blocked, a recovery code has been sent to it.';
const CHANGED_MESSAGE = 'The password has been changed. Every session of the account has been signed out.';
const WRONG_CODE = 'The email or the recovery code is wrong, or the code has expired or was used already';

/** A fresh recovery code, shown to the user as `ABCD-EFGH`. */
export function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** A code as typed, in the form it was hashed: upper case, without blanks and hyphens. */
export function normalizeRecoveryCode(typed: string): string {
  return typed.replace(/[\s-]/g, '').toUpperCase();
}

function perEmailPolicy(deps: AppDeps): RateLimitPolicy {
  return { name: RECOVERY_POLICY_NAME, ...deps.config.RECOVERY_RATE_LIMIT_PER_EMAIL };
}

function perAddressPolicy(deps: AppDeps): RateLimitPolicy {
  return { name: RECOVERY_POLICY_NAME, ...deps.config.RECOVERY_RATE_LIMIT_PER_ADDRESS };
}

/**
 * Wrong codes for emails without an account, counted like an account's strikes, so the 5th one
 * answers "blocked" too and the block cannot tell which emails have accounts.
 */
function unknownEmailStrikes(deps: AppDeps): RateLimitPolicy {
  return {
    name: 'RecoveryCodeFailures',
    limit: MAX_RECOVERY_FAILURES - 1,
    windowMs: deps.config.RECOVERY_BLOCK_DURATION,
  };
}

function humanDuration(ms: number): string {
  const hours = ms / 3_600_000;
  if (Number.isInteger(hours)) return hours === 1 ? '1 hour' : `${hours} hours`;
  const minutes = Math.max(1, Math.round(ms / 60_000));
  return minutes === 1 ? '1 minute' : `${minutes} minutes`;
}

function blockedError(deps: AppDeps): AppError {
  return new AppError(
    'Forbidden',
    `Password recovery of this account is blocked for ${humanDuration(deps.config.RECOVERY_BLOCK_DURATION)} ` +
      `after ${MAX_RECOVERY_FAILURES} wrong recovery codes; an administrator can unblock it sooner`,
  );
}

type RecoveryAccount = NonNullable<Awaited<ReturnType<typeof findLoginAccount>>>;

/**
 * The account itself as the author of a public recovery write: nobody is logged in, and the
 * change is made on the account's behalf by whoever proves to hold its mailbox.
 */
function selfPrincipal(account: RecoveryAccount): Principal {
  return {
    accountId: account.id,
    partyId: account.party_id,
    partyName: account.party_name,
    partyType: account.party_type,
    email: account.email,
    scope: TokenScope.ChangePassword,
    permissions: new Set(),
  };
}

interface RecoveryState {
  recovery_failures: number;
  recovery_blocked_until: Date | null;
}

/** Locks the account row for the rest of the transaction, so strikes and code use serialise. */
function lockRecoveryState(trx: Knex.Transaction, accountId: number): Promise<RecoveryState | undefined> {
  return trx('accounts')
    .where({ id: accountId })
    .whereNull('deleted')
    .forUpdate()
    .first<RecoveryState | undefined>('recovery_failures', 'recovery_blocked_until');
}

const isBlocked = (state: RecoveryState, now: Date) =>
  state.recovery_blocked_until !== null && state.recovery_blocked_until > now;

/**
 * Stores a new code (argon2 hash only) and mails it, in the caller's transaction; every earlier
 * unused code of the account stops working, so only the latest mail counts.
 */
async function issueRecoveryCode(
  deps: AppDeps,
  trx: Knex.Transaction,
  account: { id: number; email: string },
  now: Date,
  reason: 'recovery' | 'activation',
  prepared?: { code: string; codeHash: string },
): Promise<void> {
  const code = prepared?.code ?? newRecoveryCode();
  const codeHash = prepared?.codeHash ?? (await hashPassword(normalizeRecoveryCode(code)));
  const ttl = deps.config.RECOVERY_CODE_TTL;
  await trx('recovery_codes')
    .where({ account_id: account.id })
    .whereNull('used_at')
    .where('expires_at', '>', now)
    .update({ expires_at: now });
  await trx('recovery_codes').insert({
    account_id: account.id,
    code_hash: codeHash,
    expires_at: new Date(now.getTime() + ttl),
    created: now,
  });
  const intro =
    reason === 'activation'
      ? `an administrator asked us to send you this message so that you can set the password of your account ${account.email}.`
      : `someone (hopefully you) asked to reset the password of the account ${account.email}.`;
  await sendMail(trx, {
    to: account.email,
    subject: reason === 'activation' ? 'Set the password of your account' : 'Your password recovery code',
    kind: 'password-recovery',
    text: [
      'Hello,',
      '',
      intro,
      '',
      `Your recovery code: ${code}`,
      '',
      `It is valid for ${humanDuration(ttl)} and works once; a newer code replaces it. Enter it together with your`,
      'email and a new password to set the password.',
      '',
      reason === 'activation'
        ? 'If you do not expect an account, you can ignore this mail.'
        : 'If you did not ask for this, ignore this mail: your password stays as it is.',
    ].join('\n'),
  });
}

/**
 * Starts a password recovery (docs/decisions.md#password-recovery): mails a one-time code to the account of `email`. The
 * answer is the same whether or not the account exists or is blocked, and so is the work done.
 */
export async function recoverPassword(
  deps: AppDeps,
  email: string,
  clientAddress: string,
): Promise<PasswordRecoveryResponseDto> {
  const now = deps.now();
  await consumeRateLimit(deps.knex, perAddressPolicy(deps), `address:${clientAddress}`, now);
  await consumeRateLimit(deps.knex, perEmailPolicy(deps), `email:${email.toLowerCase()}`, now);
  // hashed before the lookup, so an unknown email costs the same time as a known one
  const code = newRecoveryCode();
  const codeHash = await hashPassword(normalizeRecoveryCode(code));
  const account = await findLoginAccount(deps.knex, { email });
  if (account) {
    await runWrite(deps, selfPrincipal(account), async ({ trx, now }) => {
      const state = await lockRecoveryState(trx, account.id);
      // a blocked account gets no code it could not use anyway; the answer does not say so
      if (!state || isBlocked(state, now)) return;
      await issueRecoveryCode(deps, trx, account, now, 'recovery', { code, codeHash });
    });
  }
  return { message: RECOVERY_MESSAGE };
}

type ChangeOutcome = 'changed' | 'wrong' | 'blocked';

/**
 * Sets a new password with a mailed recovery code (docs/decisions.md#password-recovery). A wrong
 * code counts a strike; the 5th blocks recovery for a day. Success signs the account out everywhere.
 */
export async function changePasswordWithRecoveryCode(
  deps: AppDeps,
  request: PasswordChangeRecoveryCodeRequest,
  clientAddress: string,
): Promise<PasswordChangeRecoveryCodeResponseDto> {
  // a weak password is bad input: refused before it can cost a strike or the code
  const weakness = passwordWeakness(request.password);
  if (weakness) throw fieldError('password', weakness);
  // every try costs an argon2 verification; the address limit keeps that from being a lever
  await consumeRateLimit(deps.knex, perAddressPolicy(deps), `change-password:${clientAddress}`, deps.now());
  const typedCode = normalizeRecoveryCode(request.recoveryCode);
  const account = await findLoginAccount(deps.knex, { email: request.email });
  if (!account) {
    await verifyPassword(undefined, typedCode); // the time a wrong code takes
    try {
      await consumeRateLimit(deps.knex, unknownEmailStrikes(deps), request.email.toLowerCase(), deps.now());
    } catch (error) {
      if (error instanceof AppError && error.code === 'TooManyRequests') throw blockedError(deps);
      throw error;
    }
    throw new AppError('BadRequest', WRONG_CODE);
  }
  const outcome = await runWrite<ChangeOutcome>(deps, selfPrincipal(account), async ({ trx, now }) => {
    const state = await lockRecoveryState(trx, account.id);
    if (!state) return 'wrong';
    if (isBlocked(state, now)) return 'blocked';
    const code = await trx('recovery_codes')
      .where({ account_id: account.id })
      .whereNull('used_at')
      .where('expires_at', '>', now)
      .orderBy('id', 'desc')
      .first<{ id: number; code_hash: string } | undefined>('id', 'code_hash');
    if (!(await verifyPassword(code?.code_hash, typedCode))) {
      // a block that has run out starts a fresh count
      const failures = (state.recovery_blocked_until ? 0 : state.recovery_failures) + 1;
      if (failures < MAX_RECOVERY_FAILURES) {
        await trx('accounts')
          .where({ id: account.id })
          .update({ recovery_failures: failures, recovery_blocked_until: null });
        return 'wrong';
      }
      await trx('accounts')
        .where({ id: account.id })
        .update({
          recovery_failures: failures,
          recovery_blocked_until: new Date(now.getTime() + deps.config.RECOVERY_BLOCK_DURATION),
        });
      // someone has been guessing at this code: retire it, so an unblock gives them no fresh tries
      await trx('recovery_codes')
        .where({ account_id: account.id })
        .whereNull('used_at')
        .where('expires_at', '>', now)
        .update({ expires_at: now });
      return 'blocked';
    }
    await trx('accounts')
      .where({ id: account.id })
      .update({
        password_hash: await hashPassword(request.password),
        must_change_password: false,
        recovery_failures: 0,
        recovery_blocked_until: null,
        last_modified: now,
      });
    await trx('recovery_codes').where({ id: code!.id }).update({ used_at: now });
    // a recovered account may have been taken over: every session it had ends here
    await trx('refresh_tokens')
      .where({ account_id: account.id })
      .whereNull('revoked_at')
      .update({ revoked_at: now });
    return 'changed';
  });
  // thrown after the commit, so the strike (and a block) are kept
  if (outcome === 'blocked') throw blockedError(deps);
  if (outcome === 'wrong') throw new AppError('BadRequest', WRONG_CODE);
  return { message: CHANGED_MESSAGE };
}

/**
 * Live accounts within the caller's scope: the same rule as the account reads (a User sees only
 * its own account, other parties by party scope).
 */
function accountsInScope(knex: Knex, principal: Principal): Knex.QueryBuilder {
  const query = knex('accounts as a').whereNull('a.deleted');
  if (principal.partyType === PartyType.User) return query.where('a.id', principal.accountId);
  return scopeToParties(query, 'a.party_id', principal);
}

/** Lifts a recovery block and forgets the wrong codes (docs/decisions.md#password-recovery); idempotent. */
export function unblockRecoveryCode(
  deps: AppDeps,
  principal: Principal,
  email: string,
): Promise<UnblockRecoveryCodeResponse> {
  return runWrite(deps, principal, async ({ trx, principal }) => {
    const account = await accountsInScope(trx, principal)
      .whereRaw('lower(a.email) = lower(?)', [email])
      .forUpdate()
      .first<{ id: number; email: string } | undefined>('a.id', 'a.email');
    if (!account) throw new AppError('NotFound', `No account with the email ${email} was found`);
    // recovery bookkeeping, not a change of the account resource: last_modified stays
    await trx('accounts')
      .where({ id: account.id })
      .update({ recovery_failures: 0, recovery_blocked_until: null });
    return { email: account.email, unblocked: true as const };
  });
}

/**
 * Mails the account a recovery code so its holder can set a password (the activation message of
 * docs/decisions.md#password-recovery); refused while the account's recovery is blocked, as the code could not be used.
 */
export function sendActivationMessage(
  deps: AppDeps,
  principal: Principal,
  accountId: number,
): Promise<AccountActivationMessageResponse> {
  return runWrite(deps, principal, async ({ trx, principal, now }) => {
    const account = await accountsInScope(trx, principal)
      .where('a.id', accountId)
      .forUpdate()
      .first<(RecoveryState & { id: number; email: string }) | undefined>(
        'a.id',
        'a.email',
        'a.recovery_failures',
        'a.recovery_blocked_until',
      );
    if (!account) throw new AppError('NotFound', `Account ${accountId} was not found`);
    if (isBlocked(account, now)) {
      throw new AppError(
        'Conflict',
        `Password recovery of account ${accountId} is blocked after wrong recovery codes; unblock it first`,
      );
    }
    await issueRecoveryCode(deps, trx, account, now, 'activation');
    return { sent: true as const };
  });
}
