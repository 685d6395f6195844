import type { Page, WebhookRegistrationRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from './api';
import { queryRoots } from './query-keys';

/**
 * The newest 100 registrations (the API's largest page): the webhooks filter offers them, and the
 * blocked groups name a registration by its target URL with them.
 */
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

/** The newest 100 registrations, read at most once a minute. */
export function useRegistrationOptions() {
  return useQuery(getRegistrationOptionsQueryOptions());
}
