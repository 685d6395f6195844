import { PaginatedListOfBlockedGroupRead, PartyType, WebhookGroupProgressRead } from '@platform/shared';
import { defineRoute, type RouteDefinition } from '../../http/route';
import {
  BlockedGroupQuery,
  GroupProgressQuery,
  listBlockedGroups,
  readGroupProgress,
} from './webhook-group-service';

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
  defineRoute({
    method: 'get',
    path: '/api/webhook-groups/progress',
    summary: 'Where a released group stands, counted exactly',
    description:
      'After its blocker (fromWebhookId) was retried, resolved or aborted: how many of the group wait, are ' +
      'in delivery or Retrying later, were delivered or ended from the blocker on, and which Failed webhook ' +
      'holds it again, if one does. One aggregate over the whole group, however many webhooks it has.',
    tags: ['Webhook'],
    auth: { allow: [PartyType.Admin, PartyType.PropertyManagementCompany], permission: 'Webhook.Read' },
    query: GroupProgressQuery,
    response: { description: 'The group’s progress', schema: WebhookGroupProgressRead },
    errors: [404],
    handler: ({ deps, principal, query }) => readGroupProgress(deps, principal, query),
  }),
];
