import {
  type AccountMfaSkip,
  PartyType,
  TokenScope,
  type AccountPatch,
  type AccountRead,
  type AccountWrite,
  type ChangePasswordRequest,
  type Page,
  type PartyRead,
  type Void,
} from '@platform/shared';
import { Account, AccountGroup, type Knex } from '@platform/db';
import type { AppDeps } from '../../deps';
import type { Principal } from '../../auth/principal';
import { hashPassword, passwordWeakness, verifyPassword } from '../../auth/passwords';
import {
  applyFilters,
  applyListSort,
  applySort,
  type CollectionSpec,
  type ListQuery,
  type SearchBody,
} from '../../http/collection';
import { AppError, fieldError } from '../../http/errors';
import { paginate, type PageQuery } from '../../http/pagination';
import { consumeRateLimit, refundRateLimit, type RateLimitPolicy } from '../../http/rate-limit';
import { scopeToParties } from '../../http/scope';
import { sendMail } from '../mail/mail-outbox';
import { recordOperatorAction } from '../operator-actions/operator-action-service';
import { runWrite } from '../../write-path';
import {
  ACCOUNT_COLUMNS,
  ACCOUNT_FIELDS,
  PARTY_COLUMNS,
  presentAccount,
  presentParty,
  type AccountRow,
} from './account-presenter';

export const ACCOUNT_COLLECTION: CollectionSpec = {
  fields: {
    id: { column: 'a.id', type: 'integer' },
    partyId: { column: 'a.party_id', type: 'integer' },
    groupId: { column: 'a.group_id', type: 'integer' },
    email: { column: 'a.email', type: 'string' },
    firstName: { column: 'a.first_name', type: 'string' },
    lastName: { column: 'a.last_name', type: 'string' },
    created: { column: 'a.created', type: 'timestamp' },
    lastModified: { column: 'a.last_modified', type: 'timestamp' },
  },
  sortable: ['id', 'email', 'firstName', 'lastName', 'partyId', 'created', 'lastModified'],
  tieBreaker: 'a.id',
};

/**
 * Failed password changes per account: the current password is a secret worth guessing, so a
 * stolen access token must not be a way to brute-force it. Only failures count, as with login.
 */
export const PASSWORD_CHANGE_PER_ACCOUNT: RateLimitPolicy = {
  name: 'PasswordChange',
  limit: 10,
  windowMs: 15 * 60_000,
};

/**
 * How long after an access token's `iat` the refresh token issued with it is recorded: the two
 * are signed together, the refresh token a few milliseconds later, and `iat` is rounded down to
 * the second.
 */
const SESSION_MATCH_WINDOW_MS = 2000;

/** Live accounts the caller may see: a User only its own, others by party scope. */
function visibleAccounts(knex: Knex, principal: Principal): Knex.QueryBuilder {
  const query = knex('accounts as a').select(ACCOUNT_COLUMNS).whereNull('a.deleted');
  if (principal.partyType === PartyType.User) return query.where('a.id', principal.accountId);
  return scopeToParties(query, 'a.party_id', principal);
}

/** Ids of the live accounts the caller may see, as a subquery for what belongs to an account. */
export function visibleAccountIds(knex: Knex, principal: Principal): Knex.QueryBuilder {
  return visibleAccounts(knex, principal).clearSelect().select('a.id');
}

/** The live account `id` if the caller may see it, else a 404. */
export async function visibleAccount(
  knex: Knex,
  principal: Principal,
  id: number,
  lock = false,
): Promise<AccountRow> {
  const query = visibleAccounts(knex, principal).where('a.id', id).first();
  const row: AccountRow | undefined = await (lock ? query.forUpdate() : query);
  if (!row) throw new AppError('NotFound', `Account ${id} was not found`);
  return row;
}

/** Live parties the caller may see (docs/api.md#scope-of-data). */
function visibleParties(knex: Knex, principal: Principal): Knex.QueryBuilder {
  return scopeToParties(knex('parties as p').select(PARTY_COLUMNS).whereNull('p.deleted'), 'p.id', principal);
}

/** A 400 naming `field` unless `groupId` is a live account group of party `partyId`. */
async function requireGroupOfParty(knex: Knex, groupId: number, partyId: number, field: string) {
  const group = await AccountGroup.query(knex)
    .findOne({ id: groupId, party_id: partyId })
    .whereNull('deleted')
    .select('id');
  if (!group) throw fieldError(field, `Account group ${groupId} is not a live group of party ${partyId}`);
}

/** A 409 when another live account (not one of `except`) has `email`, compared case-insensitively. */
async function requireFreeEmail(knex: Knex, email: string, except: number[] = []) {
  const taken = await Account.query(knex)
    .findOne(knex.raw('lower(email) = lower(?)', [email]))
    .whereNull('deleted')
    .whereNotIn('id', except)
    .select('id');
  if (taken) throw new AppError('Conflict', `An account with the email ${email} already exists`);
}

/** The columns a patch sets; absent (undefined) fields are left alone, null clears a name. */
function patchColumns(patch: AccountPatch, now: Date) {
  return {
    email: patch.email,
    first_name: patch.firstName,
    last_name: patch.lastName,
    group_id: patch.groupId,
    last_modified: now,
  };
}

/** A page of the accounts the caller may see, sorted as the list query says. */
export function listAccounts(knex: Knex, principal: Principal, list: ListQuery): Promise<Page<AccountRead>> {
  const query = applyListSort(visibleAccounts(knex, principal), ACCOUNT_COLLECTION, list);
  return paginate(query, list, presentAccount);
}

/** A page of the accounts the caller may see that match the search. */
export function searchAccounts(
  knex: Knex,
  principal: Principal,
  page: PageQuery,
  search: SearchBody,
): Promise<Page<AccountRead>> {
  const query = applyFilters(visibleAccounts(knex, principal), ACCOUNT_COLLECTION, search);
  return paginate(applySort(query, ACCOUNT_COLLECTION, search.sort), page, presentAccount);
}

/** The visible accounts among `ids`, in the order asked; ids out of scope are left out. */
export async function batchReadAccounts(
  knex: Knex,
  principal: Principal,
  ids: number[],
): Promise<AccountRead[]> {
  const rows: AccountRow[] = await visibleAccounts(knex, principal).whereIn('a.id', ids);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return [...new Set(ids)].flatMap((id) => {
    const row = byId.get(id);
    return row ? [presentAccount(row)] : [];
  });
}

/** One account the caller may see, else a 404. */
export async function readAccount(knex: Knex, principal: Principal, id: number): Promise<AccountRead> {
  return presentAccount(await visibleAccount(knex, principal, id));
}

/**
 * Creates an account in a party of the caller's scope. With a password, the account must change
 * it at its first login; without one, it sets one through password recovery.
 */
export async function createAccount(
  deps: AppDeps,
  principal: Principal,
  write: AccountWrite,
): Promise<AccountRead> {
  if (write.password !== undefined) {
    const weakness = passwordWeakness(write.password);
    if (weakness) throw fieldError('password', weakness);
  }
  // hashed before the transaction, so argon2's cost does not hold a connection and its locks
  const passwordHash = write.password === undefined ? null : await hashPassword(write.password);
  return runWrite(deps, principal, async ({ trx, now }) => {
    const party = await visibleParties(trx, principal).where('p.id', write.partyId).first();
    if (!party) throw new AppError('NotFound', `Party ${write.partyId} was not found`);
    await requireGroupOfParty(trx, write.groupId, write.partyId, 'groupId');
    await requireFreeEmail(trx, write.email);
    const inserted = await Account.query(trx)
      .insert({
        party_id: write.partyId,
        group_id: write.groupId,
        email: write.email,
        first_name: write.firstName ?? null,
        last_name: write.lastName ?? null,
        password_hash: passwordHash,
        must_change_password: passwordHash !== null,
        created: now,
      })
      .returning([...ACCOUNT_FIELDS]);
    return presentAccount(inserted);
  });
}

/**
 * Applies a merge patch to one visible account. A User may edit its own account but not move it
 * to another account group: the group decides its permissions.
 */
export function updateAccount(
  deps: AppDeps,
  principal: Principal,
  id: number,
  patch: AccountPatch,
): Promise<AccountRead> {
  return runWrite(deps, principal, async ({ trx, now }) => {
    const row = await visibleAccount(trx, principal, id, true);
    const movesGroup = patch.groupId !== undefined && patch.groupId !== row.group_id;
    if (movesGroup && principal.partyType === PartyType.User) {
      throw new AppError('Forbidden', 'A User cannot change the account group (groupId) of its account');
    }
    if (movesGroup) await requireGroupOfParty(trx, patch.groupId!, row.party_id, 'groupId');
    if (patch.email !== undefined) await requireFreeEmail(trx, patch.email, [id]);
    const [updated] = await Account.query(trx)
      .patch(patchColumns(patch, now))
      .where({ id })
      .returning([...ACCOUNT_FIELDS]);
    return presentAccount(updated!);
  });
}

/**
 * Applies one merge patch to the visible accounts among `ids` and answers the ids changed, in
 * the order asked; ids out of scope or unknown are left out and never changed.
 */
export function bulkUpdateAccounts(
  deps: AppDeps,
  principal: Principal,
  ids: number[],
  patch: AccountPatch,
): Promise<number[]> {
  return runWrite(deps, principal, async ({ trx, now }) => {
    const rows: AccountRow[] = await visibleAccounts(trx, principal).whereIn('a.id', ids).forUpdate();
    if (rows.length === 0) return [];
    const found = rows.map((row) => row.id);
    if (patch.groupId !== undefined) {
      const parties = [...new Set(rows.map((row) => row.party_id))];
      if (parties.length > 1) {
        throw fieldError(
          'patch.groupId',
          `The accounts belong to ${parties.length} parties; an account group belongs to one`,
        );
      }
      await requireGroupOfParty(trx, patch.groupId, parties[0]!, 'patch.groupId');
    }
    if (patch.email !== undefined) {
      if (rows.length > 1) {
        throw new AppError('Conflict', `An email is unique; it cannot be given to ${rows.length} accounts`);
      }
      await requireFreeEmail(trx, patch.email, found);
    }
    await Account.query(trx).patch(patchColumns(patch, now)).whereIn('id', found);
    const changed = new Set(found);
    return [...new Set(ids)].filter((id) => changed.has(id));
  });
}

/**
 * Soft-deletes a visible account, with its contact details, and revokes its refresh tokens, in
 * one transaction. The platform's last live Admin account cannot be deleted: nobody could create
 * Admin accounts again.
 */
export function deleteAccount(deps: AppDeps, principal: Principal, id: number): Promise<void> {
  return runWrite(deps, principal, async ({ trx, now }) => {
    await visibleAccount(trx, principal, id, true);
    const party = await Account.relatedQuery('party', trx).for(id).first().select('type', 'deleted');
    if (party!.type === PartyType.Admin && party!.deleted === null) {
      // serialises Admin deletions, so two Admins deleting each other cannot both succeed
      await trx.raw('select pg_advisory_xact_lock(hashtext(?))', ['delete-admin-account']);
      const others = await Account.query(trx)
        .joinRelated('party')
        .where('party.type', PartyType.Admin)
        .whereNull('party.deleted')
        .whereNull('accounts.deleted')
        .whereNot('accounts.id', id)
        .first()
        .select('accounts.id');
      if (!others) throw new AppError('Conflict', 'The last Admin account of the platform cannot be deleted');
    }
    await Account.query(trx).patch({ deleted: now }).where({ id });
    await trx('refresh_tokens').where({ account_id: id }).whereNull('revoked_at').update({ revoked_at: now });
    await Account.relatedQuery('contactDetails', trx).for(id).patch({ deleted: now });
  });
}

/**
 * Changes the caller's own password. Another account's password is never set by someone else:
 * an Admin or company resets it through password recovery, so the account holder chooses it.
 * Every other session of the account is signed out (its refresh tokens revoked); the calling
 * session, identified by `sessionIssuedAt` (its access token's `iat`), stays signed in.
 */
export async function changePassword(
  deps: AppDeps,
  principal: Principal,
  id: number,
  request: ChangePasswordRequest,
  sessionIssuedAt: number,
): Promise<Void> {
  const account = await visibleAccount(deps.knex, principal, id);
  if (id !== principal.accountId) {
    throw new AppError(
      'Forbidden',
      'A caller can change only its own password; another account resets its password through password recovery',
    );
  }
  const weakness = passwordWeakness(request.newPassword);
  if (weakness) throw fieldError('newPassword', weakness);
  if (request.newPassword === request.currentPassword) {
    throw fieldError('newPassword', 'Must differ from the current password');
  }
  const now = deps.now();
  const rateKey = String(id);
  // counted before the check, so concurrent guesses cannot overrun the limit; refunded on success
  await consumeRateLimit(deps.knex, PASSWORD_CHANGE_PER_ACCOUNT, rateKey, now);
  const { password_hash: currentHash } = (await Account.query(deps.knex)
    .findById(id)
    .select('password_hash'))!;
  if (!(await verifyPassword(currentHash, request.currentPassword))) {
    throw fieldError('currentPassword', 'Is not the current password of the account');
  }
  const newHash = await hashPassword(request.newPassword);
  await runWrite(deps, principal, async ({ trx, now: writeTime }) => {
    // the hash just verified must still be the current one: a concurrent change wins, not both
    const changed = await Account.query(trx)
      .patch({ password_hash: newHash, must_change_password: false, last_modified: writeTime })
      .where({ id, password_hash: currentHash })
      .whereNull('deleted');
    if (changed === 0) throw new AppError('Conflict', 'The password was changed meanwhile; try again');
    const sessionStart = sessionIssuedAt * 1000;
    const currentSession = trx('refresh_tokens')
      .select('family_id')
      .where({ account_id: id })
      .where('issued_at', '>=', new Date(sessionStart))
      .where('issued_at', '<', new Date(sessionStart + SESSION_MATCH_WINDOW_MS));
    await trx('refresh_tokens')
      .where({ account_id: id })
      .whereNull('revoked_at')
      .whereNotIn('family_id', currentSession)
      .update({ revoked_at: writeTime });
    // a recovery code mailed before the change must not undo it
    await trx('recovery_codes').where({ account_id: id }).whereNull('used_at').update({ used_at: writeTime });
    await sendMail(trx, {
      to: account.email,
      subject: 'Your password was changed',
      text:
        `The password of your account ${account.email} was changed on ${writeTime.toISOString()}. ` +
        'Other devices were signed out. If you did not change it, recover your password now and ' +
        'contact your administrator.',
      kind: 'password-changed',
    });
  });
  await refundRateLimit(deps.knex, PASSWORD_CHANGE_PER_ACCOUNT, rateKey, now);
  return {};
}

/** The principal account `row` would have, for computing what it may see. */
async function principalOf(knex: Knex, row: AccountRow): Promise<Principal> {
  const party = (await Account.relatedQuery('party', knex).for(row.id).first().select('name', 'type'))!;
  return {
    accountId: row.id,
    partyId: row.party_id,
    partyName: party.name,
    partyType: party.type,
    email: row.email,
    scope: TokenScope.Platform,
    permissions: new Set(),
  };
}

/**
 * A page of the accounts account `id` may see under the scope rules of its own party type,
 * limited to those the caller may see too.
 */
export async function listAccessibleAccounts(
  knex: Knex,
  principal: Principal,
  id: number,
  page: PageQuery,
): Promise<Page<AccountRead>> {
  const account = await visibleAccount(knex, principal, id);
  const query = visibleAccounts(knex, await principalOf(knex, account))
    .whereIn('a.id', visibleAccountIds(knex, principal))
    .orderBy('a.id');
  return paginate(query, page, presentAccount);
}

/** The party of a visible account. */
export async function readAccountParty(knex: Knex, principal: Principal, id: number): Promise<PartyRead> {
  const account = await visibleAccount(knex, principal, id);
  const party = await Account.relatedQuery('party', knex).for(account.id).first();
  return presentParty(party!);
}

/** Whether account `id` may skip its second factor at login (Admin only; 404 when unknown). */
export async function readMfaSkip(knex: Knex, principal: Principal, id: number): Promise<AccountMfaSkip> {
  await visibleAccount(knex, principal, id);
  const row = await knex('accounts').where({ id }).first('allow_skip_mfa');
  return { allowed: row.allow_skip_mfa as boolean };
}

/**
 * Sets whether account `id` may skip its second factor at login
 * (docs/decisions.md#multi-factor-authentication), audited
 * (`account.mfa-skip`, with the previous and new value) in the same transaction, also when the
 * value stays as it was (`changed` 0).
 */
export function setMfaSkip(
  deps: AppDeps,
  principal: Principal,
  id: number,
  body: AccountMfaSkip,
): Promise<AccountMfaSkip> {
  return runWrite(deps, principal, async ({ trx, now }) => {
    await visibleAccount(trx, principal, id, true);
    const before = await trx('accounts').where({ id }).first('allow_skip_mfa');
    const changed = before.allow_skip_mfa !== body.allowed;
    if (changed) {
      await trx('accounts').where({ id }).update({ allow_skip_mfa: body.allowed, last_modified: now });
    }
    await recordOperatorAction(trx, principal, {
      action: 'account.mfa-skip',
      changed: changed ? 1 : 0,
      detail: { accountId: id, previous: before.allow_skip_mfa as boolean, allowed: body.allowed },
    });
    return { allowed: body.allowed };
  });
}
