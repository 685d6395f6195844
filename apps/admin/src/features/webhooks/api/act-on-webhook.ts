import type { WebhookRead } from '@platform/shared';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';
import type { WebhookAction } from '../../../lib/webhook-states';

/** POST /api/webhooks/{id}/abort | resolve | retry: answers the webhook in its new state. */
export function actOnWebhook(id: number, action: WebhookAction) {
  return api.request<WebhookRead>(`/api/webhooks/${id}/${action}`, { method: 'POST' });
}

/**
 * Abort, resolve or retry a webhook. Refreshes every view of webhooks, the blocked groups (a
 * released group leaves the list) and the overview. A refusal (409: the state moved on) also
 * refreshes, so the screen shows the state that caused it.
 */
export function useActOnWebhook() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, action }: { id: number; action: WebhookAction }) => actOnWebhook(id, action),
    // not awaited: the outcome is shown at once, the refetches follow
    onSettled: () => {
      for (const queryKey of [queryRoots.webhooks, queryRoots.blockedGroups, queryRoots.webhookStats]) {
        void queryClient.invalidateQueries({ queryKey });
      }
    },
  });
}
