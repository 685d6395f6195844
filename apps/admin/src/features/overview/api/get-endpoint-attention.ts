import type { Page, WebhookRegistrationRead } from '@platform/shared';
import { queryOptions, useQueries, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { useNow } from '../../../components/ui/use-now';
import { queryRoots } from '../../../lib/query-keys';
import { getRegistrationHealthQueryOptions } from '../../../lib/registration-health';
import { breakerProbes, endpointAttention } from '../utils/endpoint-attention';

/** How often the overview's endpoint section refreshes while the tab is visible. */
export const ATTENTION_REFRESH_MS = 30_000;

/** How many registrations the overview checks: the newest, one page of the API's largest size. */
export const ATTENTION_REGISTRATIONS = 100;

/** The newest registrations, for their statuses and their endpoints. */
export function getAttentionRegistrations(signal?: AbortSignal) {
  return api.request<Page<WebhookRegistrationRead>>('/api/webhook-registrations', {
    query: { PageSize: ATTENTION_REGISTRATIONS, SortByAttributeName: 'id', AscendingOrder: false },
    signal,
  });
}

export function getAttentionRegistrationsQueryOptions() {
  return queryOptions({
    queryKey: [...queryRoots.registrations, 'list', 'attention'],
    queryFn: ({ signal }) => getAttentionRegistrations(signal),
    refetchInterval: ATTENTION_REFRESH_MS,
    staleTime: ATTENTION_REFRESH_MS / 2,
  });
}

/** How often the overview looks at the clock, so an endpoint leaves the list when its hold ends. */
const HOLD_CHECK_MS = 5_000;

/**
 * Endpoints needing attention (breaker not closed, held by the receiver), paused and disabled
 * registrations among the newest registrations: one list read, plus one health read per endpoint
 * with an active registration (the breaker and the hold are the endpoint's, so one registration
 * of it answers for all, and names the others).
 */
export function useEndpointAttention() {
  const registrations = useQuery(getAttentionRegistrationsQueryOptions());
  const now = useNow(HOLD_CHECK_MS);
  const items = registrations.data?.items ?? [];
  const health = useQueries({
    queries: breakerProbes(items).map((id) => getRegistrationHealthQueryOptions(id, ATTENTION_REFRESH_MS)),
  });
  const healthById = new Map(
    health.flatMap((h) => (h.data ? [[h.data.registrationId, h.data] as const] : [])),
  );
  return {
    registrations,
    attention: registrations.data ? endpointAttention(items, healthById, now) : undefined,
    /** Health reads that failed (not merely pending): the endpoints listed may be incomplete. */
    breakerReadsFailed: health.filter((h) => h.isError && !h.data).length,
    checked: items.length,
    total: registrations.data?.totalCount ?? 0,
  };
}
