import {
  contactValueProblem,
  MAX_CONTACT_DETAILS_PER_ACCOUNT,
  type AccountContactDetailsPatch,
  type AccountContactDetailsRead,
  type AccountContactDetailsWrite,
  type ContactDetailType,
  type Page,
} from '@platform/shared';
import { Account, AccountContactDetail, type Knex } from '@platform/db';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { applyListSort, type CollectionSpec, type ListQuery } from '../../http/collection';
import { AppError, fieldError } from '../../http/errors';
import { paginate, type PageQuery } from '../../http/pagination';
import { visibleAccount, visibleAccountIds } from '../accounts/account-service';
import { runWrite } from '../../write-path';
import {
  CONTACT_DETAIL_COLUMNS,
  presentContactDetail,
  type ContactDetailRow,
} from './contact-detail-presenter';

export const CONTACT_DETAIL_COLLECTION: CollectionSpec = {
  fields: {
    id: { column: 'cd.id', type: 'integer' },
    accountId: { column: 'cd.account_id', type: 'integer' },
    type: { column: 'cd.type', type: 'string' },
    value: { column: 'cd.value', type: 'string' },
    label: { column: 'cd.label', type: 'string' },
    isPrimary: { column: 'cd.is_primary', type: 'boolean' },
    created: { column: 'cd.created', type: 'timestamp' },
    lastModified: { column: 'cd.last_modified', type: 'timestamp' },
  },
  sortable: ['id', 'accountId', 'type', 'value', 'label', 'isPrimary', 'created', 'lastModified'],
  tieBreaker: 'cd.id',
};

/** Live contact details whose account the caller may see (their visibility is their account's). */
export function visibleContactDetails(knex: Knex, principal: Principal): Knex.QueryBuilder {
  return knex('account_contact_details as cd')
    .select(CONTACT_DETAIL_COLUMNS)
    .whereNull('cd.deleted')
    .whereIn('cd.account_id', visibleAccountIds(knex, principal));
}

/** A page of the contact details the caller may see, sorted as asked. */
export function listContactDetails(
  knex: Knex,
  principal: Principal,
  list: ListQuery,
): Promise<Page<AccountContactDetailsRead>> {
  const query = applyListSort(visibleContactDetails(knex, principal), CONTACT_DETAIL_COLLECTION, list);
  return paginate(query, list, presentContactDetail);
}

/** The visible contact details among `ids`, in the order asked, without duplicates. */
export async function batchReadContactDetails(
  knex: Knex,
  principal: Principal,
  ids: number[],
): Promise<AccountContactDetailsRead[]> {
  const rows: ContactDetailRow[] = await visibleContactDetails(knex, principal).whereIn('cd.id', ids);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return [...new Set(ids)].flatMap((id) => {
    const row = byId.get(id);
    return row ? [presentContactDetail(row)] : [];
  });
}

/** One visible contact detail; 404 when unknown or out of scope. */
export async function readContactDetail(
  knex: Knex,
  principal: Principal,
  id: number,
): Promise<AccountContactDetailsRead> {
  const row: ContactDetailRow | undefined = await visibleContactDetails(knex, principal)
    .where('cd.id', id)
    .first();
  if (!row) throw new AppError('NotFound', `Account contact detail ${id} was not found`);
  return presentContactDetail(row);
}

/**
 * Locks the visible, live accounts among `accountIds` (in id order, so two writers cannot
 * deadlock) and answers their ids. The lock serialises writes to one account's details, so two
 * concurrent "make primary" calls cannot leave two primaries.
 */
async function lockVisibleAccounts(
  trx: Knex.Transaction,
  principal: Principal,
  accountIds: number[],
): Promise<Set<number>> {
  const rows: { id: number }[] = await trx('accounts')
    .select('id')
    .whereIn('id', accountIds)
    // checked again on the locked row, so an account deleted meanwhile is not written to
    .whereNull('deleted')
    .whereIn('id', visibleAccountIds(trx, principal))
    .orderBy('id')
    .forUpdate();
  return new Set(rows.map((row) => row.id));
}

/** Makes the account's other live details of its type non-primary, so `detail` is the only primary. */
async function demoteOtherPrimaries(
  trx: Knex.Transaction,
  detail: { id: number; accountId: number; type: string },
  now: Date,
): Promise<void> {
  await Account.relatedQuery('contactDetails', trx)
    .for(detail.accountId)
    .patch({ is_primary: false, last_modified: now })
    .where({ type: detail.type, is_primary: true })
    .whereNot('id', detail.id);
}

/** Adds a contact detail to an account the caller may see (a User: only its own). */
export function createContactDetail(
  deps: AppDeps,
  principal: Principal,
  write: AccountContactDetailsWrite,
): Promise<AccountContactDetailsRead> {
  return runWrite(deps, principal, async ({ trx, now }) => {
    const visible = await lockVisibleAccounts(trx, principal, [write.accountId]);
    if (!visible.has(write.accountId)) {
      throw new AppError('NotFound', `Account ${write.accountId} was not found`);
    }
    const held = await Account.relatedQuery('contactDetails', trx).for(write.accountId).resultSize();
    if (held >= MAX_CONTACT_DETAILS_PER_ACCOUNT) {
      throw fieldError(
        'accountId',
        `An account holds at most ${MAX_CONTACT_DETAILS_PER_ACCOUNT} contact details`,
      );
    }
    const row = await AccountContactDetail.query(trx)
      .insert({
        account_id: write.accountId,
        type: write.type,
        value: write.value,
        label: write.label ?? null,
        is_primary: write.isPrimary ?? false,
        created: now,
      })
      .returning('*');
    if (row.is_primary) {
      await demoteOtherPrimaries(trx, { id: row.id, accountId: row.account_id, type: row.type }, now);
    }
    return presentContactDetail(row);
  });
}

/**
 * Applies one merge patch to every visible contact detail among `ids` and answers the ids
 * updated, in the order asked. Ids out of scope are left out and never changed. The patch must
 * fit every row it lands on (a new type must suit each row's value), and at most one row per
 * account and type may end up primary; otherwise nothing is written.
 */
export function bulkUpdateContactDetails(
  deps: AppDeps,
  principal: Principal,
  ids: number[],
  patch: AccountContactDetailsPatch,
): Promise<number[]> {
  return runWrite(deps, principal, async ({ trx, now }) => {
    const candidates: { account_id: number }[] = await trx('account_contact_details')
      .distinct('account_id')
      .whereIn('id', ids)
      .whereNull('deleted');
    const accounts = await lockVisibleAccounts(
      trx,
      principal,
      candidates.map((row) => row.account_id),
    );
    // read after the lock, so the rows cannot change between this check and the update
    const rows: ContactDetailRow[] = await trx('account_contact_details as cd')
      .select(CONTACT_DETAIL_COLUMNS)
      .whereIn('cd.id', ids)
      .whereIn('cd.account_id', [...accounts])
      .whereNull('cd.deleted');
    const merged = rows.map((row) => ({
      id: row.id,
      accountId: row.account_id,
      type: (patch.type ?? row.type) as ContactDetailType,
      value: patch.value ?? row.value,
      isPrimary: patch.isPrimary ?? row.is_primary,
    }));
    for (const detail of merged) {
      const problem = contactValueProblem(detail.type, detail.value);
      if (problem) {
        throw fieldError(
          patch.value === undefined ? 'patch.type' : 'patch.value',
          `Contact detail ${detail.id}: ${problem}`,
        );
      }
    }
    const primaries = merged.filter((detail) => detail.isPrimary);
    const primaryKeys = new Set(primaries.map((detail) => `${detail.accountId}:${detail.type}`));
    if (primaryKeys.size < primaries.length) {
      throw fieldError(
        patch.isPrimary === undefined ? 'patch.type' : 'patch.isPrimary',
        'At most one contact detail per account and type can be primary',
      );
    }
    if (merged.length === 0) return [];
    const updated = new Set(merged.map((detail) => detail.id));
    await AccountContactDetail.query(trx)
      .patch({
        type: patch.type,
        value: patch.value,
        label: patch.label,
        is_primary: patch.isPrimary,
        last_modified: now,
      })
      .whereIn('id', [...updated]);
    for (const detail of primaries) await demoteOtherPrimaries(trx, detail, now);
    return [...new Set(ids)].filter((id) => updated.has(id));
  });
}

/** A page of the live contact details of a visible account. */
export async function listAccountContactDetails(
  knex: Knex,
  principal: Principal,
  id: number,
  page: PageQuery,
): Promise<Page<AccountContactDetailsRead>> {
  await visibleAccount(knex, principal, id);
  // the shared pager runs Knex builders: the relation's query is handed over as one
  const query = Account.relatedQuery('contactDetails', knex)
    .for(id)
    .orderBy('account_contact_details.id')
    .toKnexQuery();
  return paginate<ContactDetailRow, AccountContactDetailsRead>(query, page, presentContactDetail);
}
