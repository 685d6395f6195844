import type { WebhookAttemptDetailRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** GET /api/webhooks/{id}/attempts/{attemptId}: one attempt in full, with the body it sent. */
export function getWebhookAttempt(webhookId: number, attemptId: number, signal?: AbortSignal) {
  return api.request<WebhookAttemptDetailRead>(`/api/webhooks/${webhookId}/attempts/${attemptId}`, {
    signal,
  });
}

export function getWebhookAttemptQueryOptions(webhookId: number, attemptId: number) {
  return queryOptions({
    queryKey: [...queryRoots.webhooks, 'attempt', webhookId, attemptId],
    queryFn: ({ signal }) => getWebhookAttempt(webhookId, attemptId, signal),
    // a recorded attempt never changes
    staleTime: Infinity,
  });
}

/** One attempt in full; fetched only while `enabled` (its record is open). */
export function useWebhookAttempt(webhookId: number, attemptId: number, enabled: boolean) {
  return useQuery({ ...getWebhookAttemptQueryOptions(webhookId, attemptId), enabled });
}
