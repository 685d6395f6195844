import type { WebhookPortalSessionRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';

/** GET /api/webhook-portal/session: the portal token's own session (party, actions, theme). */
export function getPortalSession(signal?: AbortSignal) {
  return api.request<WebhookPortalSessionRead>('/api/webhook-portal/session', { signal });
}

export function getPortalSessionQueryOptions() {
  // polled, so a revoked or expired session shows as ended without a click
  return queryOptions({
    queryKey: ['webhook-portal', 'session'],
    queryFn: ({ signal }) => getPortalSession(signal),
    refetchInterval: 30_000,
  });
}

/** The portal's session. */
export function usePortalSession() {
  return useQuery(getPortalSessionQueryOptions());
}
