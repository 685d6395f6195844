import type { WebhookStatsSeriesRead } from '@platform/shared';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** How often a time series refreshes while the page is visible: its finest step is a minute. */
export const SERIES_REFRESH_MS = 30_000;

/** Deliveries over the last `hours`, of one registration or of all the caller sees. */
export function getWebhookStatsSeries(
  hours: number,
  registrationId: number | undefined,
  signal?: AbortSignal,
): Promise<WebhookStatsSeriesRead> {
  const params = new URLSearchParams({ from: new Date(Date.now() - hours * 3_600_000).toISOString() });
  if (registrationId !== undefined) params.set('registrationId', String(registrationId));
  return api.request<WebhookStatsSeriesRead>(`/api/webhook-stats/series?${params}`, { signal });
}

export function useWebhookStatsSeries(hours: number, registrationId?: number) {
  return useQuery({
    queryKey: [...queryRoots.webhookStats, 'series', registrationId ?? 'all', hours],
    queryFn: ({ signal }) => getWebhookStatsSeries(hours, registrationId, signal),
    refetchInterval: SERIES_REFRESH_MS,
    // switching the range keeps the old chart until the new one is there
    placeholderData: keepPreviousData,
  });
}
