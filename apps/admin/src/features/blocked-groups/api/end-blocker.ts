import type { WebhookRead } from '@platform/shared';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** POST /api/webhooks/{id}/resolve | abort for the Failed webhook holding a group. */
export function endBlocker(webhookId: number, action: 'resolve' | 'abort') {
  return api.request<WebhookRead>(`/api/webhooks/${webhookId}/${action}`, { method: 'POST' });
}

/**
 * Resolves or aborts a blocker, which releases its group: the next webhook becomes due. Refreshes
 * the blocked groups, every view of webhooks and the overview (not awaited: the outcome shows
 * at once).
 */
export function useEndBlocker() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ webhookId, action }: { webhookId: number; action: 'resolve' | 'abort' }) =>
      endBlocker(webhookId, action),
    onSettled: () => {
      for (const queryKey of [queryRoots.blockedGroups, queryRoots.webhooks, queryRoots.webhookStats]) {
        void queryClient.invalidateQueries({ queryKey });
      }
    },
  });
}
