import {
  AccountContactDetailsBulkUpdate,
  AccountContactDetailsRead,
  AccountContactDetailsWrite,
  ALL_PARTY_TYPES,
  IdList,
  PaginatedListOfAccountContactDetailsRead,
  PartyType,
} from '@platform/shared';
import { z } from 'zod';
import { listQuery } from '../../http/collection';
import { PageQuery } from '../../http/pagination';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { pathId } from '../../http/validate';
import {
  batchReadContactDetails,
  bulkUpdateContactDetails,
  CONTACT_DETAIL_COLLECTION,
  createContactDetail,
  listAccountContactDetails,
  listContactDetails,
  readContactDetail,
} from './contact-detail-service';

const everyone = { allow: ALL_PARTY_TYPES };
const tags = ['AccountContactDetails'];

export const contactDetailRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'post',
    path: '/api/account-contact-details',
    summary: 'Add a contact detail to an account',
    description:
      'The account must be within the caller’s scope (a User: its own account). Making the detail ' +
      'primary makes the account’s other details of its type non-primary.',
    tags,
    auth: {
      allow: [PartyType.Admin, PartyType.PropertyManagementCompany, PartyType.User],
      permission: 'AccountContactDetails.Create',
    },
    body: AccountContactDetailsWrite,
    response: { description: 'The contact detail created', schema: AccountContactDetailsRead },
    errors: [404],
    handler: ({ deps, principal, body }) => createContactDetail(deps, principal, body),
  }),
  defineRoute({
    method: 'get',
    path: '/api/account-contact-details',
    summary: 'List the contact details of the accounts within the caller’s scope',
    tags,
    auth: everyone,
    query: listQuery(CONTACT_DETAIL_COLLECTION),
    response: { description: 'A page of contact details', schema: PaginatedListOfAccountContactDetailsRead },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, query }) => listContactDetails(deps.knex, principal, query),
  }),
  defineRoute({
    method: 'post',
    path: '/api/account-contact-details/batch',
    summary: 'Read many contact details by id',
    description: 'Ids outside the caller’s scope or unknown are left out of the result.',
    tags,
    auth: everyone,
    body: IdList,
    response: { description: 'The contact details found', schema: z.array(AccountContactDetailsRead) },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, body }) => batchReadContactDetails(deps.knex, principal, body.ids),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/account-contact-details/batch',
    summary: 'Update many contact details with one merge patch',
    description:
      'Answers the ids updated, in the order asked; ids outside the caller’s scope are left out ' +
      'and never changed. If the patch does not fit one of the details, nothing is written.',
    tags,
    auth: {
      allow: [PartyType.Admin, PartyType.PropertyManagementCompany],
      permission: 'AccountContactDetails.Update',
    },
    body: AccountContactDetailsBulkUpdate,
    response: { description: 'The ids updated', schema: z.array(z.number().int()) },
    errors: [404],
    handler: ({ deps, principal, body }) => bulkUpdateContactDetails(deps, principal, body.ids, body.patch),
  }),
  defineRoute({
    method: 'get',
    path: '/api/account-contact-details/:id',
    summary: 'Read one contact detail',
    tags,
    auth: everyone,
    params: z.strictObject({ id: pathId }),
    response: { description: 'The contact detail', schema: AccountContactDetailsRead },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, params }) => readContactDetail(deps.knex, principal, params.id),
  }),
  defineRoute({
    method: 'get',
    path: '/api/accounts/:id/account-contact-details',
    summary: 'The contact details of an account',
    tags: ['Accounts'],
    auth: everyone,
    params: z.strictObject({ id: pathId }),
    query: PageQuery,
    response: { description: 'A page of contact details', schema: PaginatedListOfAccountContactDetailsRead },
    textual: true,
    errors: [404],
    handler: ({ deps, principal, params, query }) =>
      listAccountContactDetails(deps.knex, principal, params.id, query),
  }),
];
