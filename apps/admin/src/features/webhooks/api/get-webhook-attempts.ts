import type { Page, WebhookAttemptRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** More than any retry schedule has attempts (at most 50), so one page holds them all. */
const ATTEMPTS_PAGE_SIZE = 100;

/** GET /api/webhooks/{id}/attempts, newest first. */
export function getWebhookAttempts(id: number, signal?: AbortSignal) {
  return api.request<Page<WebhookAttemptRead>>(`/api/webhooks/${id}/attempts`, {
    query: { PageSize: ATTEMPTS_PAGE_SIZE },
    signal,
  });
}

export function getWebhookAttemptsQueryOptions(id: number, polling: number | false) {
  return queryOptions({
    queryKey: [...queryRoots.webhooks, 'attempts', id],
    queryFn: ({ signal }) => getWebhookAttempts(id, signal),
    refetchInterval: polling,
  });
}

/** The attempts of a webhook; polls every `polling` ms while its webhook may still move. */
export function useWebhookAttempts(id: number, polling: number | false) {
  return useQuery(getWebhookAttemptsQueryOptions(id, polling));
}
