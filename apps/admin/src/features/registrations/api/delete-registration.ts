import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** DELETE /api/webhook-registrations/{id}: its undelivered webhooks become Aborted. */
export function deleteRegistration(id: number) {
  return api.request<void>(`/api/webhook-registrations/${id}`, { method: 'DELETE' });
}

/** Deletes a registration and refreshes everything its webhooks appear in. */
export function useDeleteRegistration() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteRegistration,
    onSuccess: (_, id) => {
      // the page of the deleted registration is left at once; marked stale, it is not refetched
      // into a 404 on the way out
      void queryClient.invalidateQueries({
        queryKey: [...queryRoots.registrations, 'detail', id],
        refetchType: 'none',
      });
      for (const queryKey of [
        [...queryRoots.registrations, 'list'],
        queryRoots.webhooks,
        queryRoots.blockedGroups,
        queryRoots.webhookStats,
      ]) {
        void queryClient.invalidateQueries({ queryKey });
      }
    },
  });
}
