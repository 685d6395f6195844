import {
  PartyType,
  type AccountGroupPermissionMapping,
  type Page,
  type PermissionRead,
} from '@platform/shared';
import { AccountGroup, type Knex } from '@platform/db';
import type { Principal } from '../../auth/principal';
import { applyListSort, type CollectionSpec, type ListQuery } from '../../http/collection';
import { AppError } from '../../http/errors';
import { paginate, type PageQuery } from '../../http/pagination';
import { scopeToParties } from '../../http/scope';
import { presentGroupPermission, presentPermission, type PermissionRow } from './permission-presenter';

export const PERMISSION_COLLECTION: CollectionSpec = {
  fields: {
    id: { column: 'p.id', type: 'integer' },
    name: { column: 'p.name', type: 'string' },
    resource: { column: 'p.resource', type: 'string' },
    action: { column: 'p.action', type: 'integer' },
  },
  sortable: ['id', 'name', 'resource', 'action'],
  tieBreaker: 'p.id',
};

const PERMISSION_COLUMNS = ['p.id', 'p.name', 'p.resource', 'p.action'];

/** A page of the whole permission catalog; it is public knowledge to every signed-in caller. */
export function listPermissions(knex: Knex, list: ListQuery): Promise<Page<PermissionRead>> {
  const query = applyListSort(
    knex('permissions as p').select(PERMISSION_COLUMNS),
    PERMISSION_COLLECTION,
    list,
  );
  return paginate(query, list, presentPermission);
}

/**
 * Live account groups the caller may see: Admin all; a User only its own account's group; any
 * other party its own account's group and the groups of the parties in its scope.
 */
function visibleGroups(knex: Knex, principal: Principal): Knex.QueryBuilder {
  const query = knex('account_groups as g').whereNull('g.deleted');
  if (principal.partyType === PartyType.Admin) return query;
  const ownGroup = knex('accounts').select('group_id').where('id', principal.accountId);
  if (principal.partyType === PartyType.User) return query.whereIn('g.id', ownGroup);
  return query.where((q) =>
    q.whereIn('g.id', ownGroup).orWhere((inner) => scopeToParties(inner, 'g.party_id', principal)),
  );
}

/** A page of the permissions group `groupId` grants, by permission id; 404 when out of scope. */
export async function listGroupPermissions(
  knex: Knex,
  principal: Principal,
  groupId: number,
  page: PageQuery,
): Promise<Page<AccountGroupPermissionMapping>> {
  const group = await visibleGroups(knex, principal).where('g.id', groupId).first('g.id');
  if (!group) throw new AppError('NotFound', `Account group ${groupId} was not found`);
  // the shared pager runs Knex builders: the relation's query is handed over as one
  const query = AccountGroup.relatedQuery('permissions', knex)
    .for(groupId)
    .orderBy('permissions.id')
    .toKnexQuery();
  return paginate(query, page, (row: PermissionRow) => presentGroupPermission(groupId, row));
}
