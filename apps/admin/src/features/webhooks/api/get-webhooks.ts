import type { Page, WebhookRead } from '@platform/shared';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';
import { filtersToApiQuery, type WebhookFilters } from '../utils/webhook-filters';

/** GET /api/webhooks with the table's filters, newest first. */
export function getWebhooks(filters: WebhookFilters, signal?: AbortSignal) {
  return api.request<Page<WebhookRead>>('/api/webhooks', { query: filtersToApiQuery(filters), signal });
}

/** How often the webhooks table refreshes while nothing is selected. */
export const WEBHOOKS_REFRESH_MS = 10_000;

/**
 * `paused`: rows are selected. Refreshing then could move a ticked row off the page (newer
 * webhooks push it down) while it stays selected and acted on unseen, so the list holds still
 * until the selection is cleared or the operator refreshes by hand.
 */
export function getWebhooksQueryOptions(filters: WebhookFilters, paused = false) {
  return queryOptions({
    queryKey: [...queryRoots.webhooks, 'list', filters],
    queryFn: ({ signal }) => getWebhooks(filters, signal),
    placeholderData: keepPreviousData,
    refetchInterval: paused ? false : WEBHOOKS_REFRESH_MS,
    refetchOnWindowFocus: !paused,
  });
}

/** A page of webhooks matching `filters`, refreshed every 10 s while visible and nothing is selected. */
export function useWebhooks(filters: WebhookFilters, options: { paused?: boolean } = {}) {
  return useQuery(getWebhooksQueryOptions(filters, options.paused));
}
