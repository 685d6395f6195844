import {
  AccountBulkUpdate,
  AccountMfaSkip,
  AccountPatch,
  AccountRead,
  AccountWrite,
  ALL_PARTY_TYPES,
  ChangePasswordRequest,
  IdList,
  PaginatedListOfAccountRead,
  PartyRead,
  PartyType,
  TokenScope,
  Void,
} from '@platform/shared';
import { decodeJwt } from 'jose';
import type { Context } from 'koa';
import { z } from 'zod';
import { listQuery, searchBody } from '../../http/collection';
import { PageQuery } from '../../http/pagination';
import { defineRoute } from '../../http/route';
import { pathId } from '../../http/validate';
import {
  ACCOUNT_COLLECTION,
  batchReadAccounts,
  bulkUpdateAccounts,
  changePassword,
  createAccount,
  deleteAccount,
  listAccessibleAccounts,
  listAccounts,
  readAccount,
  readAccountParty,
  readMfaSkip,
  searchAccounts,
  setMfaSkip,
  updateAccount,
} from './account-service';

const { Admin, PropertyManagementCompany: Company, User } = PartyType;
const everyone = { allow: ALL_PARTY_TYPES };
const tags = ['Accounts'];
const idParams = z.strictObject({ id: pathId });

/** The `iat` of the request's access token, which the router has already verified. */
function accessTokenIssuedAt(ctx: Context): number {
  const token = ctx
    .get('authorization')
    .replace(/^Bearer\s+/i, '')
    .trim();
  return decodeJwt(token).iat!;
}

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
    path: '/api/accounts',
    summary: 'Create an account',
    description:
      'The party must be within the caller’s scope (404 otherwise) and the group a live group of that party. ' +
      'Emails are unique among live accounts, case-insensitively (409). With a password, the account must ' +
      'change it at its first login; without one, it sets one through password recovery.',
    tags,
    auth: { allow: [Admin, Company], permission: 'Account.Create' },
    body: AccountWrite,
    response: { description: 'The new account', schema: AccountRead },
    errors: [404, 409],
    handler: ({ deps, principal, body }) => createAccount(deps, principal, body),
  }),
  defineRoute({
    method: 'post',
    path: '/api/accounts/search',
    summary: 'Search accounts within the caller’s scope',
    tags,
    auth: everyone,
    query: PageQuery,
    body: searchBody(ACCOUNT_COLLECTION).meta({ id: 'AccountSearchRequest' }),
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
    method: 'patch',
    path: '/api/accounts/batch',
    summary: 'Apply one merge patch to many accounts',
    description:
      'Answers the ids changed, in the order asked. Ids outside the caller’s scope or unknown are left out and ' +
      'never changed. All or nothing: one invalid change refuses the whole request.',
    tags,
    auth: { allow: [Admin, Company], permission: 'Account.Update' },
    body: AccountBulkUpdate,
    response: { description: 'The ids of the accounts changed', schema: z.array(z.number().int()) },
    errors: [404, 409],
    handler: ({ deps, principal, body }) => bulkUpdateAccounts(deps, principal, body.ids, body.patch),
  }),
  defineRoute({
    method: 'get',
    path: '/api/accounts/myself',
    summary: 'The token’s own account',
    tags,
    auth: everyone,
    response: { description: 'The caller’s account', schema: AccountRead },
    textual: true,
    // a deleted account's token is still valid until it expires
    errors: [404],
    handler: ({ deps, principal }) => readAccount(deps.knex, principal, principal.accountId),
  }),
  defineRoute({
    method: 'get',
    path: '/api/accounts/:id',
    summary: 'Read one account',
    tags,
    auth: everyone,
    params: idParams,
    response: { description: 'The account', schema: AccountRead },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, params }) => readAccount(deps.knex, principal, params.id),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/accounts/:id',
    summary: 'Change an account (JSON merge patch)',
    description:
      'A User edits only its own account and cannot change its groupId (403). A new email must be unique (409); ' +
      'a new group must be a live group of the account’s party.',
    tags,
    auth: { allow: [Admin, Company, User], permission: 'Account.Update' },
    params: idParams,
    body: AccountPatch,
    response: { description: 'The changed account', schema: AccountRead },
    errors: [404, 409],
    handler: ({ deps, principal, params, body }) => updateAccount(deps, principal, params.id, body),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/accounts/:id',
    summary: 'Delete an account',
    description:
      'Soft delete; the account’s refresh tokens are revoked and its contact details deleted with it. A User ' +
      'deletes only itself. The platform’s last Admin account cannot be deleted (409).',
    tags,
    auth: { allow: [Admin, Company, User], permission: 'Account.Delete' },
    params: idParams,
    status: 204,
    response: { description: 'Deleted' },
    errors: [404, 409],
    handler: ({ deps, principal, params }) => deleteAccount(deps, principal, params.id),
  }),
  defineRoute({
    method: 'get',
    path: '/api/accounts/:id/accessible-accounts',
    summary: 'The accounts an account can see',
    description:
      'Computed with the scope rules of that account’s party type, limited to the accounts the caller sees.',
    tags,
    auth: everyone,
    params: idParams,
    query: PageQuery,
    response: { description: 'A page of accounts', schema: PaginatedListOfAccountRead },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, params, query }) =>
      listAccessibleAccounts(deps.knex, principal, params.id, query),
  }),
  defineRoute({
    method: 'get',
    path: '/api/accounts/:id/party',
    summary: 'The party of an account',
    tags,
    auth: everyone,
    params: idParams,
    response: { description: 'The party', schema: PartyRead },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, params }) => readAccountParty(deps.knex, principal, params.id),
  }),
  defineRoute({
    method: 'get',
    path: '/api/accounts/:id/skip-multi-factor-authentication',
    summary: 'Whether an account may skip its second factor at login',
    description: 'Admin only.',
    tags,
    auth: { allow: [Admin], permission: 'Account.Read' },
    params: idParams,
    response: { description: 'The account’s setting', schema: AccountMfaSkip },
    errors: [404],
    handler: ({ deps, principal, params }) => readMfaSkip(deps.knex, principal, params.id),
  }),
  defineRoute({
    method: 'put',
    path: '/api/accounts/:id/skip-multi-factor-authentication',
    summary: 'Let an account skip its second factor at login, or stop it',
    description:
      'Admin only. While allowed, a login with `skipMultiFactorAuthentication: true` answers ' +
      'tokens without asking for the second factor; otherwise that request field is ignored. Audited as ' +
      '`account.mfa-skip` (GET /api/operator-actions), also when the value stays as it was.',
    tags,
    auth: { allow: [Admin], permission: 'Account.Update' },
    params: idParams,
    body: AccountMfaSkip,
    response: { description: 'The account’s new setting', schema: AccountMfaSkip },
    errors: [404],
    handler: ({ deps, principal, params, body }) => setMfaSkip(deps, principal, params.id, body),
  }),
  defineRoute({
    method: 'put',
    path: '/api/accounts/:id/password',
    summary: 'Change one’s own password',
    description:
      'Only for the caller’s own account (403 for another visible one); needs the current password (400 when ' +
      'wrong; 10 failures per 15 minutes, then 429). The one call a change-password token may make. Signs out ' +
      'the account’s other sessions; the calling one stays signed in and its next refresh has the platform scope.',
    tags,
    auth: { allow: [Admin, Company, User], scopes: [TokenScope.Platform, TokenScope.ChangePassword] },
    params: idParams,
    body: ChangePasswordRequest,
    response: { description: 'Changed', schema: Void },
    errors: [404, 409, 429],
    handler: ({ deps, principal, params, body, ctx }) =>
      changePassword(deps, principal, params.id, body, accessTokenIssuedAt(ctx)),
  }),
];
