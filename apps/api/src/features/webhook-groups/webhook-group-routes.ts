import { PaginatedListOfBlockedGroupRead, PartyType } from '@platform/shared';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { BlockedGroupQuery, listBlockedGroups } from './webhook-group-service';

export const webhookGroupRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'get',
    path: '/api/webhook-groups',
    summary: 'List the groups held by a Failed webhook (blocked=true)',
    description:
      'Groups of grouped registrations without shouldGroupContinueAfterFail whose head failed: later ' +
      'webhooks wait until it is resolved, aborted or retried successfully.',
    tags: ['Webhook'],
    auth: { allow: [PartyType.Admin, PartyType.PropertyManagementCompany], permission: 'Webhook.Read' },
    query: BlockedGroupQuery,
    response: { description: 'A page of blocked groups', schema: PaginatedListOfBlockedGroupRead },
    textual: true,
    handler: ({ deps, principal, query }) => listBlockedGroups(deps, principal, query),
  }),
];
