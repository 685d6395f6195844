import type { WebhookRead } from '@platform/shared';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** POST /api/webhooks/{id}/resend: answers the new webhook that delivers the same body again. */
export function resendWebhook(id: number) {
  return api.request<WebhookRead>(`/api/webhooks/${id}/resend`, { method: 'POST' });
}

/** Resend a Successful webhook. Refreshes every view of webhooks and the overview (a new one is due). */
export function useResendWebhook() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => resendWebhook(id),
    onSettled: () => {
      for (const queryKey of [queryRoots.webhooks, queryRoots.webhookStats]) {
        void queryClient.invalidateQueries({ queryKey });
      }
    },
  });
}
