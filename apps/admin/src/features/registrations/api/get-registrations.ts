import type { Page, WebhookRegistrationRead } from '@platform/shared';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

export interface RegistrationListParams {
  pageNumber: number;
  pageSize: number;
}

/** GET /api/webhook-registrations, newest first. */
export function getRegistrations(params: RegistrationListParams, signal?: AbortSignal) {
  return api.request<Page<WebhookRegistrationRead>>('/api/webhook-registrations', {
    query: {
      PageNumber: params.pageNumber,
      PageSize: params.pageSize,
      SortByAttributeName: 'id',
      AscendingOrder: false,
    },
    signal,
  });
}

export function getRegistrationsQueryOptions(params: RegistrationListParams) {
  return queryOptions({
    queryKey: [...queryRoots.registrations, 'list', params],
    queryFn: ({ signal }) => getRegistrations(params, signal),
    placeholderData: keepPreviousData,
    // statuses change by themselves (the dispatcher disables a registration)
    refetchInterval: 30_000,
  });
}

/** A page of the operator's webhook registrations. */
export function useRegistrations(params: RegistrationListParams) {
  return useQuery(getRegistrationsQueryOptions(params));
}
