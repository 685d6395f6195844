import type { WebhookDetailRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';
import { isMovingState } from '../../../lib/webhook-states';

/** While a webhook may still move on its own, its page polls this often. */
export const MOVING_REFRESH_MS = 3000;

/** GET /api/webhooks/{id}: the webhook with its delivery body. */
export function getWebhook(id: number, signal?: AbortSignal) {
  return api.request<WebhookDetailRead>(`/api/webhooks/${id}`, { signal });
}

export function getWebhookQueryOptions(id: number) {
  return queryOptions({
    queryKey: [...queryRoots.webhooks, 'detail', id],
    queryFn: ({ signal }) => getWebhook(id, signal),
    // Created, Retrying and Pending change without the operator; final and Failed ones do not
    refetchInterval: (query) =>
      query.state.data && isMovingState(query.state.data.state) ? MOVING_REFRESH_MS : false,
  });
}

/** One webhook, polled while the dispatcher may still change it. */
export function useWebhook(id: number) {
  return useQuery(getWebhookQueryOptions(id));
}
