import type { Page, WebhookRegistrationRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** The registrations offered by the filter (newest 100, the API's largest page). */
export function getRegistrationOptions(signal?: AbortSignal) {
  return api.request<Page<WebhookRegistrationRead>>('/api/webhook-registrations', {
    query: { PageSize: 100, SortByAttributeName: 'id', AscendingOrder: false },
    signal,
  });
}

export function getRegistrationOptionsQueryOptions() {
  return queryOptions({
    queryKey: [...queryRoots.registrations, 'list', 'options'],
    queryFn: ({ signal }) => getRegistrationOptions(signal),
    staleTime: 60_000,
  });
}

/** Registrations to choose from in the webhooks filter. */
export function useRegistrationOptions() {
  return useQuery(getRegistrationOptionsQueryOptions());
}
