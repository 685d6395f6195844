import type { Page, WebhookRead } from '@platform/shared';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';
import { filtersToApiQuery, type WebhookFilters } from '../utils/webhook-filters';

/** GET /api/webhooks with the table's filters, newest first. */
export function getWebhooks(filters: WebhookFilters, signal?: AbortSignal) {
  return api.request<Page<WebhookRead>>('/api/webhooks', { query: filtersToApiQuery(filters), signal });
}

export function getWebhooksQueryOptions(filters: WebhookFilters) {
  return queryOptions({
    queryKey: [...queryRoots.webhooks, 'list', filters],
    queryFn: ({ signal }) => getWebhooks(filters, signal),
    placeholderData: keepPreviousData,
    refetchInterval: 10_000,
  });
}

/** A page of webhooks matching `filters`, refreshed every 10 s while visible. */
export function useWebhooks(filters: WebhookFilters) {
  return useQuery(getWebhooksQueryOptions(filters));
}
