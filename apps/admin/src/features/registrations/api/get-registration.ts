import type { WebhookRegistrationRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** GET /api/webhook-registrations/{id}: never carries credentials or the signing secret. */
export function getRegistration(id: number, signal?: AbortSignal) {
  return api.request<WebhookRegistrationRead>(`/api/webhook-registrations/${id}`, { signal });
}

export function getRegistrationQueryOptions(id: number) {
  return queryOptions({
    queryKey: [...queryRoots.registrations, 'detail', id],
    queryFn: ({ signal }) => getRegistration(id, signal),
  });
}

/** One webhook registration. */
export function useRegistration(id: number) {
  return useQuery(getRegistrationQueryOptions(id));
}
