import type { WebhookRead } from '@platform/shared';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** What an operator does to the Failed webhook holding a group: each releases the group. */
export type BlockerAction = 'retry' | 'resolve' | 'abort';

/**
 * POST /api/webhooks/{id}/retry | resolve | abort for the Failed webhook holding a group. A retry
 * keeps it at the head of its group (the group moves on once it is delivered); resolve and abort
 * end it, so the next webhook of the group becomes due.
 */
export function endBlocker(webhookId: number, action: BlockerAction) {
  return api.request<WebhookRead>(`/api/webhooks/${webhookId}/${action}`, { method: 'POST' });
}

/**
 * Retries, resolves or aborts a blocker, which releases its group: the next webhook becomes due. Refreshes
 * the blocked groups, every view of webhooks and the overview (not awaited: the outcome shows
 * at once).
 */
export function useEndBlocker() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ webhookId, action }: { webhookId: number; action: BlockerAction }) =>
      endBlocker(webhookId, action),
    onSettled: () => {
      for (const queryKey of [queryRoots.blockedGroups, queryRoots.webhooks, queryRoots.webhookStats]) {
        void queryClient.invalidateQueries({ queryKey });
      }
    },
  });
}
