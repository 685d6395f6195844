import type { WebhookStatsRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** How often the overview refreshes itself while the tab is visible. */
export const STATS_REFRESH_MS = 10_000;

export function getWebhookStats(signal?: AbortSignal): Promise<WebhookStatsRead> {
  return api.request<WebhookStatsRead>('/api/webhook-stats', { signal });
}

export function getWebhookStatsQueryOptions() {
  return queryOptions({
    queryKey: [...queryRoots.webhookStats],
    queryFn: ({ signal }) => getWebhookStats(signal),
    // react-query pauses the interval while the tab is hidden (refetchIntervalInBackground false)
    refetchInterval: STATS_REFRESH_MS,
    staleTime: STATS_REFRESH_MS / 2,
  });
}

/** The overview figures, refreshed every ~10 s while the page is visible. */
export function useWebhookStats() {
  return useQuery(getWebhookStatsQueryOptions());
}
