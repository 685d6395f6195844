import type { WebhookGroupProgressRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { queryRoots } from '../../../lib/query-keys';
import { groupProgress, groupRefreshMs } from '../utils/group-progress';

export interface GroupRef {
  registrationId: number;
  groupKey: string;
  /** The Failed webhook that held the group until an operator ended or retried it. */
  blockerWebhookId: number;
}

/**
 * Where a released group stands, counted by the API over the whole group
 * (`GET /api/webhook-groups/progress`), however many webhooks it holds.
 */
export function getGroupProgress(group: GroupRef, signal?: AbortSignal) {
  return api.request<WebhookGroupProgressRead>('/api/webhook-groups/progress', {
    query: {
      registrationId: group.registrationId,
      groupKey: group.groupKey,
      fromWebhookId: group.blockerWebhookId,
    },
    signal,
  });
}

export function getGroupProgressQueryOptions(group: GroupRef) {
  return queryOptions({
    queryKey: [...queryRoots.webhooks, 'group', group.registrationId, group.groupKey, group.blockerWebhookId],
    queryFn: ({ signal }) => getGroupProgress(group, signal),
    // polled until nothing changes without an operator: drained, or held again
    refetchInterval: (query) => (query.state.data ? groupRefreshMs(groupProgress(query.state.data)) : 2000),
  });
}

/** A released group's progress, polled (every 2 s, or 10 s while only a retry waits) to watch it drain. */
export function useGroupProgress(group: GroupRef) {
  return useQuery(getGroupProgressQueryOptions(group));
}
