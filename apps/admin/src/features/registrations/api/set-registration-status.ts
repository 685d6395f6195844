import type { WebhookRegistrationRead } from '@platform/shared';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';
import type { RegistrationAction } from '../utils/registration-actions';
import { getRegistrationQueryOptions } from './get-registration';

/** POST /api/webhook-registrations/{id}/pause | resume: answers the registration in its new status. */
export function setRegistrationStatus(id: number, action: RegistrationAction) {
  return api.request<WebhookRegistrationRead>(`/api/webhook-registrations/${id}/${action}`, {
    method: 'POST',
  });
}

/**
 * Pauses or resumes (re-enables) a registration. Refreshes the registrations (lists, detail,
 * health), the webhooks (a resume sends the waiting ones) and the overview; a refusal refreshes
 * too, so the screen shows the status that caused it.
 */
export function useSetRegistrationStatus() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, action }: { id: number; action: RegistrationAction }) =>
      setRegistrationStatus(id, action),
    onSuccess: (registration) =>
      queryClient.setQueryData(getRegistrationQueryOptions(registration.id).queryKey, registration),
    // not awaited: the outcome is shown at once, the refetches follow
    onSettled: () => {
      for (const queryKey of [queryRoots.registrations, queryRoots.webhooks, queryRoots.webhookStats]) {
        void queryClient.invalidateQueries({ queryKey });
      }
    },
  });
}
