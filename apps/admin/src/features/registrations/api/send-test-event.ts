import type { WebhookTestRequest, WebhookTestResult } from '@platform/shared';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/**
 * POST /api/webhook-registrations/{id}/test: one delivery now, marked `x-webhook-test: 1`, with the
 * registration's authorization and signature. Not a webhook row; the answer says how it went.
 */
export function sendTestEvent(id: number, request: WebhookTestRequest) {
  return api.request<WebhookTestResult>(`/api/webhook-registrations/${id}/test`, {
    method: 'POST',
    json: request,
  });
}

/**
 * Sends a test event. The attempt counts in the target's health (a failure may open its breaker),
 * so the registration's health refetches after it.
 */
export function useSendTestEvent() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, request }: { id: number; request: WebhookTestRequest }) => sendTestEvent(id, request),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: queryRoots.registrations }),
  });
}
