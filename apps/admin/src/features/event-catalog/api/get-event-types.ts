import type { WebhookEventTypeRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';

/** GET /api/webhook-event-types: every subscribable entity and event, with its schema and an example. */
export function getEventTypes(signal?: AbortSignal) {
  return api.request<WebhookEventTypeRead[]>('/api/webhook-event-types', { signal });
}

export function getEventTypesQueryOptions() {
  // the catalog changes only with a release of the API
  return queryOptions({
    queryKey: ['webhook-event-types'],
    queryFn: ({ signal }) => getEventTypes(signal),
    staleTime: Infinity,
  });
}

/** The event catalog. */
export function useEventTypes() {
  return useQuery(getEventTypesQueryOptions());
}
