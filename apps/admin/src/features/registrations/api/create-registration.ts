import type { WebhookRegistrationCreated, WebhookRegistrationWrite } from '@platform/shared';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** POST /api/webhook-registrations: the answer carries the signing secret, this once. */
export function createRegistration(body: WebhookRegistrationWrite) {
  return api.request<WebhookRegistrationCreated>('/api/webhook-registrations', {
    method: 'POST',
    json: body,
  });
}

/** Creates a registration and refreshes the registration lists. */
export function useCreateRegistration() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createRegistration,
    // the answer holds the signing secret: keep it out of the mutation cache once unused
    gcTime: 0,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryRoots.registrations }),
  });
}
