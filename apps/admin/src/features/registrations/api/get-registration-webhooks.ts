import type { Page, WebhookRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';

/** How many recent webhooks a registration's page shows. */
export const RECENT_WEBHOOKS = 10;

/** The newest webhooks of one registration (GET /api/webhooks?registrationId=…). */
export function getRegistrationWebhooks(registrationId: number, signal?: AbortSignal) {
  return api.request<Page<WebhookRead>>('/api/webhooks', {
    query: {
      registrationId,
      PageSize: RECENT_WEBHOOKS,
      SortByAttributeName: 'id',
      AscendingOrder: false,
    },
    signal,
  });
}

export function getRegistrationWebhooksQueryOptions(registrationId: number) {
  return queryOptions({
    // under the webhooks root, so webhook actions anywhere refresh it
    queryKey: [...queryRoots.webhooks, 'by-registration', registrationId],
    queryFn: ({ signal }) => getRegistrationWebhooks(registrationId, signal),
    refetchInterval: 10_000,
  });
}

/** The recent webhooks of a registration, refreshed every 10 s while visible. */
export function useRegistrationWebhooks(registrationId: number) {
  return useQuery(getRegistrationWebhooksQueryOptions(registrationId));
}
