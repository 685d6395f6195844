import {
  ALL_PARTY_TYPES,
  PaginatedListOfAccountGroupPermissionMapping,
  PaginatedListOfPermissionRead,
} from '@platform/shared';
import { z } from 'zod';
import { listQuery } from '../../http/collection';
import { PageQuery } from '../../http/pagination';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { pathId } from '../../http/validate';
import { listGroupPermissions, listPermissions, PERMISSION_COLLECTION } from './permission-service';

const everyone = { allow: ALL_PARTY_TYPES };

export const permissionRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'get',
    path: '/api/account-permissions',
    summary: 'List every permission an operation can require',
    description: 'The whole catalog; `id` is the permission’s bit in the token’s `permissions` claim.',
    tags: ['AccountPermissions'],
    auth: everyone,
    query: listQuery(PERMISSION_COLLECTION),
    response: { description: 'A page of permissions', schema: PaginatedListOfPermissionRead },
    textual: true,
    handler: ({ deps, query }) => listPermissions(deps.knex, query),
  }),
  defineRoute({
    method: 'get',
    path: '/api/account-groups/:id/permission-mappings',
    summary: 'List the effective permissions of an account group',
    description:
      'The group must belong to a party within the caller’s scope, or be the caller’s own group ' +
      '(a User: only its own group). Ordered by permission id.',
    tags: ['AccountGroups'],
    auth: everyone,
    params: z.strictObject({ id: pathId }),
    query: PageQuery,
    response: {
      description: 'A page of the group’s permissions',
      schema: PaginatedListOfAccountGroupPermissionMapping,
    },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, params, query }) =>
      listGroupPermissions(deps.knex, principal, params.id, query),
  }),
];
