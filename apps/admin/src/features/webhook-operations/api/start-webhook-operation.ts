import type { WebhookBulkRequest, WebhookOperationRead, WebhookWindowRequest } from '@platform/shared';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { operationQueryKey } from './get-webhook-operation';

/** POST /api/webhooks/bulk: answers 202 with the operation, polled with `useOperation`. */
export function startBulk(request: WebhookBulkRequest): Promise<WebhookOperationRead> {
  return api.request<WebhookOperationRead>('/api/webhooks/bulk', { method: 'POST', json: request });
}

/** What a registration's window operation does: recover its Failed webhooks, or replay its changes. */
export type WindowOperation = 'recover' | 'replay';

/** POST /api/webhook-registrations/{id}/recover | replay: answers 202 with the operation. */
export function startWindowOperation(
  registrationId: number,
  kind: WindowOperation,
  request: WebhookWindowRequest,
): Promise<WebhookOperationRead> {
  return api.request<WebhookOperationRead>(`/api/webhook-registrations/${registrationId}/${kind}`, {
    method: 'POST',
    json: request,
  });
}

/**
 * Starts an operation (`start` is `startBulk` or a window operation) and seeds the operation's
 * query with the 202 answer, so `useOperation` shows it at once and polls from there. What the
 * operation changes is refreshed by `useOperation` when it finishes, not here.
 */
export function useStartOperation<Request>(start: (request: Request) => Promise<WebhookOperationRead>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: start,
    onSuccess: (operation) => queryClient.setQueryData(operationQueryKey(operation.id), operation),
  });
}
