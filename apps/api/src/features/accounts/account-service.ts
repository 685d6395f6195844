import { PartyType, type AccountRead, type Page } from '@platform/shared';
import type { Knex } from '@platform/db';
import type { Principal } from '../../auth/principal';
import {
  applyFilters,
  applyListSort,
  applySort,
  type CollectionSpec,
  type ListQuery,
  type SearchBody,
} from '../../http/collection';
import { AppError } from '../../http/errors';
import { paginate, type PageQuery } from '../../http/pagination';
import { scopeToParties } from '../../http/scope';
import { ACCOUNT_COLUMNS, presentAccount, type AccountRow } from './account-presenter';

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

/** Live accounts the caller may see: a User only its own, others by party scope. */
function visibleAccounts(knex: Knex, principal: Principal): Knex.QueryBuilder {
  const query = knex('accounts as a').select(ACCOUNT_COLUMNS).whereNull('a.deleted');
  if (principal.partyType === PartyType.User) return query.where('a.id', principal.accountId);
  return scopeToParties(query, 'a.party_id', principal);
}

export function listAccounts(knex: Knex, principal: Principal, list: ListQuery): Promise<Page<AccountRead>> {
  const query = applyListSort(visibleAccounts(knex, principal), ACCOUNT_COLLECTION, list);
  return paginate(query, list, presentAccount);
}

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

export async function readAccount(knex: Knex, principal: Principal, id: number): Promise<AccountRead> {
  const row: AccountRow | undefined = await visibleAccounts(knex, principal).where('a.id', id).first();
  if (!row) throw new AppError('NotFound', `Account ${id} was not found`);
  return presentAccount(row);
}
