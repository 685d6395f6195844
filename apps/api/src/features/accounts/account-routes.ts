import { AccountRead, ALL_PARTY_TYPES, IdList, PaginatedListOfAccountRead } from '@platform/shared';
import { z } from 'zod';
import { listQuery, searchBody } from '../../http/collection';
import { PageQuery } from '../../http/pagination';
import { defineRoute } from '../../http/route';
import { pathId } from '../../http/validate';
import {
  ACCOUNT_COLLECTION,
  batchReadAccounts,
  listAccounts,
  readAccount,
  searchAccounts,
} from './account-service';

const everyone = { allow: ALL_PARTY_TYPES };
const tags = ['Accounts'];

export const accountRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/accounts',
    summary: 'List accounts within the caller’s scope',
    tags,
    auth: everyone,
    query: listQuery(ACCOUNT_COLLECTION),
    response: { description: 'A page of accounts', schema: PaginatedListOfAccountRead },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, query }) => listAccounts(deps.knex, principal, query),
  }),
  defineRoute({
    method: 'post',
    path: '/api/accounts/search',
    summary: 'Search accounts within the caller’s scope',
    tags,
    auth: everyone,
    query: PageQuery,
    body: searchBody(ACCOUNT_COLLECTION),
    response: { description: 'A page of accounts', schema: PaginatedListOfAccountRead },
    textual: true,
    handler: ({ deps, principal, query, body }) => searchAccounts(deps.knex, principal, query, body),
  }),
  defineRoute({
    method: 'post',
    path: '/api/accounts/batch',
    summary: 'Read many accounts by id',
    description: 'Ids outside the caller’s scope or unknown are left out of the result.',
    tags,
    auth: everyone,
    body: IdList,
    response: { description: 'The accounts found', schema: z.array(AccountRead) },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, body }) => batchReadAccounts(deps.knex, principal, body.ids),
  }),
  defineRoute({
    method: 'get',
    path: '/api/accounts/myself',
    summary: 'The token’s own account',
    tags,
    auth: everyone,
    response: { description: 'The caller’s account', schema: AccountRead },
    textual: true,
    handler: ({ deps, principal }) => readAccount(deps.knex, principal, principal.accountId),
  }),
  defineRoute({
    method: 'get',
    path: '/api/accounts/:id',
    summary: 'Read one account',
    tags,
    auth: everyone,
    params: z.strictObject({ id: pathId }),
    response: { description: 'The account', schema: AccountRead },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, params }) => readAccount(deps.knex, principal, params.id),
  }),
];
