import type { WebhookRegistrationPatch, WebhookRegistrationRead } from '@platform/shared';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';
import { getRegistrationQueryOptions } from './get-registration';

/** PATCH /api/webhook-registrations/{id}: the target URL or the rate limit; answers the registration. */
export function updateRegistration(id: number, patch: WebhookRegistrationPatch) {
  return api.request<WebhookRegistrationRead>(`/api/webhook-registrations/${id}`, {
    method: 'PATCH',
    json: patch,
  });
}

/**
 * Changes a registration's delivery settings. Refreshes the registrations (lists, detail, health:
 * a new URL can mean another endpoint, with another breaker) and the overview.
 */
export function useUpdateRegistration() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, patch }: { id: number; patch: WebhookRegistrationPatch }) =>
      updateRegistration(id, patch),
    onSuccess: (registration) =>
      queryClient.setQueryData(getRegistrationQueryOptions(registration.id).queryKey, registration),
    onSettled: () => {
      for (const queryKey of [queryRoots.registrations, queryRoots.webhookStats]) {
        void queryClient.invalidateQueries({ queryKey });
      }
    },
  });
}
