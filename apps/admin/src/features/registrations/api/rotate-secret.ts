import type { RotateSecretRequest, RotateSecretResult } from '@platform/shared';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/**
 * POST /api/webhook-registrations/{id}/rotate-secret: answers the new signing secret, this once,
 * and until when deliveries also carry the previous secret's signature.
 */
export function rotateSecret(id: number, request: RotateSecretRequest) {
  return api.request<RotateSecretResult>(`/api/webhook-registrations/${id}/rotate-secret`, {
    method: 'POST',
    json: request,
  });
}

/** Rotates a registration's signing secret; the registration is read again (its last change moved). */
export function useRotateSecret() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, request }: { id: number; request: RotateSecretRequest }) => rotateSecret(id, request),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: queryRoots.registrations }),
  });
}
