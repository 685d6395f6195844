import { PartyType, SERIES_MAX_HOURS, WebhookStatsRead, WebhookStatsSeriesRead } from '@platform/shared';
import { defineRoute, type RouteDefinition } from '../../http/route';
import { readWebhookStatsSeries, WebhookStatsSeriesQuery } from './webhook-stats-series';
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
  defineRoute({
    method: 'get',
    path: '/api/webhook-stats/series',
    summary: 'Deliveries over a chosen range, for the console’s charts',
    description:
      'Per step (1, 5, 15 or 60 minutes: at most 240 points) of the range [from, to): the requests sent, ' +
      'their successes, their failures on the target’s side (5xx, timeout, connection) and the others (4xx, ' +
      'redirect), the attempts that sent no request (skipped), and the p50 and p95 request duration. ' +
      `From the per-minute figures, kept ${SERIES_MAX_HOURS} hours: a range is at most that long. One ` +
      'registration (registrationId) or every registration the caller may see.',
    tags: ['Webhook'],
    auth: { allow: [PartyType.Admin, PartyType.PropertyManagementCompany], permission: 'Webhook.Read' },
    query: WebhookStatsSeriesQuery,
    response: { description: 'The series', schema: WebhookStatsSeriesRead },
    errors: [404],
    handler: ({ deps, principal, query }) => readWebhookStatsSeries(deps, principal, query),
  }),
];
