import { PaginatedListOfOperatorActionRead, PartyType } from '@platform/shared';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { listOperatorActions, OperatorActionQuery } from './operator-action-service';

export const operatorActionRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'get',
    path: '/api/operator-actions',
    summary: 'The audit trail of operator actions, newest first',
    description:
      'Who retried, aborted, resolved, resent, recovered, replayed, tested, rotated, paused or resumed what, ' +
      'when, with which filter or window, and how many rows it changed. Admin sees every action; a ' +
      'Property Management Company the actions of its own accounts and of its managed parties, and ' +
      'every action on the registrations of its scope.',
    tags: ['Webhook'],
    auth: { allow: [PartyType.Admin, PartyType.PropertyManagementCompany], permission: 'Webhook.Read' },
    query: OperatorActionQuery,
    response: { description: 'A page of operator actions', schema: PaginatedListOfOperatorActionRead },
    textual: true,
    handler: ({ deps, principal, query }) => listOperatorActions(deps.knex, principal, query),
  }),
];
