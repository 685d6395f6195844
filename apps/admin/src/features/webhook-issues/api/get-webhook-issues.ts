import type { Page, WebhookIssueRead } from '@platform/shared';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** How often triage is read again (the lines move as webhooks are retried, delivered and fail). */
export const TRIAGE_REFRESH_MS = 10_000;

export interface WebhookIssuesQuery {
  registrationId?: number;
  page: number;
  pageSize: number;
}

/** GET /api/webhook-issues: Failed and Retrying webhooks grouped by registration, error and status. */
export function getWebhookIssues(query: WebhookIssuesQuery, signal?: AbortSignal) {
  return api.request<Page<WebhookIssueRead>>('/api/webhook-issues', {
    query: { registrationId: query.registrationId, PageNumber: query.page, PageSize: query.pageSize },
    signal,
  });
}

export function getWebhookIssuesQueryOptions(query: WebhookIssuesQuery) {
  return queryOptions({
    // under the webhooks root: any webhook action or operation anywhere refreshes triage
    queryKey: [...queryRoots.webhooks, 'issues', query],
    queryFn: ({ signal }) => getWebhookIssues(query, signal),
    placeholderData: keepPreviousData,
    refetchInterval: TRIAGE_REFRESH_MS,
  });
}

/** A page of triage lines, refreshed every 10 s while visible. */
export function useWebhookIssues(query: WebhookIssuesQuery) {
  return useQuery(getWebhookIssuesQueryOptions(query));
}
