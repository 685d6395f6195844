import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/**
 * The answer of GET /api/webhook-stats. Its zod schema (`WebhookStatsRead`) is defined beside the
 * route in apps/api/src/features/webhooks/webhook-stats-service.ts until it moves to
 * @platform/shared; then this interface goes and the shared type is imported instead.
 */
export interface WebhookStats {
  generatedAt: string;
  countsByState: { state: number; count: number }[];
  window: { from: string; to: string; minutes: number };
  attemptsPerMinute: { minute: string; attempts: number; failures: number }[];
  attempts: number;
  failures: number;
  successRate: number | null;
  latencyMs: { p50: number | null; p90: number | null; p99: number | null };
  dueBacklog: number;
  oldestDueSeconds: number | null;
  blockedGroups: number;
}

/** How often the overview refreshes itself while the tab is visible. */
export const STATS_REFRESH_MS = 10_000;

export function getWebhookStats(signal?: AbortSignal): Promise<WebhookStats> {
  return api.request<WebhookStats>('/api/webhook-stats', { signal });
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
