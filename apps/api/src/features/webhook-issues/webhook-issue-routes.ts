import { PaginatedListOfWebhookIssueRead, PartyType } from '@platform/shared';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { listWebhookIssues, WebhookIssueQuery } from './webhook-issue-service';

export const webhookIssueRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'get',
    path: '/api/webhook-issues',
    summary: 'Triage: Failed and Retrying webhooks grouped by registration, state, error kind and status',
    description:
      'One line per registration, state (4 Failed, 2 Retrying), and error kind and status code of the ' +
      'webhooks’ last attempt, largest first, with first and last seen, the target URL and a sample ' +
      'webhook. Each line’s `filter` selects exactly its webhooks in POST /api/webhooks/bulk. Live ' +
      'registrations of the caller’s party (Admin: all).',
    tags: ['Webhook'],
    auth: { allow: [PartyType.Admin, PartyType.PropertyManagementCompany], permission: 'Webhook.Read' },
    query: WebhookIssueQuery,
    response: { description: 'A page of triage lines', schema: PaginatedListOfWebhookIssueRead },
    textual: true,
    handler: ({ deps, principal, query }) => listWebhookIssues(deps, principal, query),
  }),
];
