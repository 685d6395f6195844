import type { WebhookRegistrationRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { ApiError } from '../../../lib/api-client';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/**
 * The registration of a webhook, for its authorization type (the headers a delivery carries).
 * Shares its key with the registrations screens, so they fill one cache entry.
 */
export function getWebhookRegistration(id: number, signal?: AbortSignal) {
  return api.request<WebhookRegistrationRead>(`/api/webhook-registrations/${id}`, { signal });
}

export function getWebhookRegistrationQueryOptions(id: number) {
  return queryOptions({
    queryKey: [...queryRoots.registrations, 'detail', id],
    queryFn: ({ signal }) => getWebhookRegistration(id, signal),
    // a deleted registration is a 404 for good; its webhooks stay readable
    retry: (count, error) => !(error instanceof ApiError && error.status === 404) && count < 2,
  });
}

/** The registration of a webhook (404 once deleted). */
export function useWebhookRegistration(id: number | undefined) {
  return useQuery({ ...getWebhookRegistrationQueryOptions(id ?? 0), enabled: id !== undefined });
}
