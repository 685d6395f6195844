import type { Page, WebhookRead } from '@platform/shared';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api';
import { parseGroupKey } from '../../../lib/group-key';
import { queryRoots } from '../../../lib/query-keys';
import { groupProgress, groupRefreshMs } from '../utils/group-progress';

export interface GroupRef {
  registrationId: number;
  groupKey: string;
  /** The Failed webhook that held the group until an operator ended or retried it. */
  blockerWebhookId: number;
  /** It was retried (not ended): its failing again holds the group again. */
  blockerRetried?: boolean;
}

/**
 * The newest webhooks of one group: a group is the webhooks of one entity in one registration
 * (`group_key = entityName:entityId`), so the list filters give them.
 */
export function getGroupWebhooks(group: GroupRef, signal?: AbortSignal) {
  const { entityName, entityId } = parseGroupKey(group.groupKey);
  return api.request<Page<WebhookRead>>('/api/webhooks', {
    query: {
      registrationId: group.registrationId,
      entityName,
      entityId,
      PageSize: 100,
      SortByAttributeName: 'id',
      AscendingOrder: false,
    },
    signal,
  });
}

export function getGroupWebhooksQueryOptions(group: GroupRef) {
  return queryOptions({
    queryKey: [...queryRoots.webhooks, 'group', group.registrationId, group.groupKey, group.blockerWebhookId],
    queryFn: ({ signal }) => getGroupWebhooks(group, signal),
    // polled until nothing changes without an operator: drained, or held again
    refetchInterval: (query) =>
      query.state.data
        ? groupRefreshMs(
            groupProgress(query.state.data.items, group.blockerWebhookId, Date.now(), group.blockerRetried),
          )
        : 2000,
  });
}

/** The webhooks of a released group, polled (every 2 s, or 10 s while only a retry waits) to watch it drain. */
export function useGroupWebhooks(group: GroupRef) {
  return useQuery(getGroupWebhooksQueryOptions(group));
}
