import { PartyType, WebhookStatsRead } from '@platform/shared';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { readWebhookStats, STATS_WINDOW_MINUTES } from './webhook-stats-service';

export const webhookStatsRoutes: RouteDefinition[] = [
  defineRoute({
    method: 'get',
    path: '/api/webhook-stats',
    summary: 'Overview figures of the webhook engine, for the operator console',
    description:
      'Counts by state, delivery attempts and failures per minute of the last ' +
      `${STATS_WINDOW_MINUTES} minutes, success rate and latency percentiles of those attempts, the due ` +
      'backlog and the age of its oldest webhook, and the number of blocked groups, all from one ' +
      'snapshot. Webhooks of the registrations of the caller’s party (Admin: all).',
    tags: ['Webhook'],
    auth: { allow: [PartyType.Admin, PartyType.PropertyManagementCompany], permission: 'Webhook.Read' },
    response: { description: 'The figures', schema: WebhookStatsRead },
    handler: ({ deps, principal }) => readWebhookStats(deps, principal),
  }),
];
